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

// PrivacyResult is the outcome of a privacy request.
type PrivacyResult struct {
	// Mode is the request in force for the bib: DeleteMode outranks
	// HideMode, so a hide after a delete is still a delete.
	Mode string
	// Changed counts the photos this call changed (0 when repeated).
	Changed int
}

// RemoveBib carries out a runner's privacy request for a bib in an event of
// org. The request is recorded in Postgres first, so that photos ingested
// from then on drop the bib (or, for a delete, are not kept); then, in
// HideMode, the bib's index entries are deleted and the bib struck from its
// photos (which stay in the gallery), or, in DeleteMode, every photo
// showing the bib (or having had it hidden) is deleted. It is idempotent.
func (s *Service) RemoveBib(ctx context.Context, org, event, bib, mode string) (PrivacyResult, error) {
	if err := CheckBib("bib", bib); err != nil {
		return PrivacyResult{}, err
	}
	if mode != HideMode && mode != DeleteMode {
		return PrivacyResult{}, Invalid("mode", "must be hide or delete", printable(mode))
	}
	if _, err := s.truth.Event(ctx, org, event); err != nil {
		return PrivacyResult{}, err
	}
	mode, err := s.truth.HideBib(ctx, org, event, bib, mode)
	if err != nil {
		return PrivacyResult{}, err
	}
	n, err := s.index.RemoveBib(ctx, org, event, bib, mode, s.now())
	return PrivacyResult{Mode: mode, Changed: n}, err
}
