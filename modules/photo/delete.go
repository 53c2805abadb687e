package photo

import "context"

// DeletePhoto deletes one photo of an event of org, with its BIB_INDEX
// items, in one transaction.
func (s *Service) DeletePhoto(ctx context.Context, org, event, ulid string) (*Photo, error) {
	if !ValidULID(ulid) {
		return nil, notFound("photo", ulid)
	}
	if _, err := s.truth.Event(ctx, org, event); err != nil {
		return nil, err
	}
	return s.index.Delete(ctx, org, event, ulid)
}

// RemoveBib carries out a runner's privacy request for a bib in an event of
// org. The request is recorded in Postgres first, so that photos ingested
// from then on drop the bib; then, in HideMode, the bib's index entries are
// deleted and the bib struck from its photos (which stay in the gallery),
// or, in DeleteMode, every photo showing the bib is deleted. It is
// idempotent and returns how many photos it changed.
func (s *Service) RemoveBib(ctx context.Context, org, event, bib, mode string) (int, error) {
	if err := CheckBib("bib", bib); err != nil {
		return 0, err
	}
	if mode != HideMode && mode != DeleteMode {
		return 0, Invalid("mode", "must be hide or delete", printable(mode))
	}
	if _, err := s.truth.Event(ctx, org, event); err != nil {
		return 0, err
	}
	// Walk with the mode in force: a hide after a delete is still a delete.
	mode, err := s.truth.HideBib(ctx, org, event, bib, mode)
	if err != nil {
		return 0, err
	}
	return s.index.RemoveBib(ctx, org, event, bib, mode, s.now())
}
