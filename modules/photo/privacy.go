package photo

import (
	"context"
	"time"
)

// Privacy is the removals' role: an organizer deleting a photo, and a
// runner's privacy request for a bib (hide it, or delete every photo
// showing it). photo-api builds it (services/internal/photobackend) for
// its deletion and privacy routes. It is safe for concurrent use.
type Privacy struct {
	cfg PrivacyConfig
}

// PrivacyConfig configures a Privacy.
type PrivacyConfig struct {
	// Events checks that the event is the organizer's (pgstore).
	Events EventReader
	// Requests records the privacy requests, which ingest reads (pgstore).
	Requests PrivacyStore
	// Index is where the photos are deleted or the bibs struck
	// (dynamostore).
	Index RemovalIndex
	// Now returns the time the changed photos are stamped with (default
	// time.Now).
	Now func() time.Time
}

func (c PrivacyConfig) withDefaults() PrivacyConfig {
	c.Now = defaultNow(c.Now)
	return c
}

// NewPrivacy returns a Privacy.
func NewPrivacy(cfg PrivacyConfig) *Privacy {
	return &Privacy{cfg: cfg.withDefaults()}
}

// DeletePhoto deletes one photo of an event of org, with its BIB_INDEX
// items, in one transaction.
func (p *Privacy) DeletePhoto(ctx context.Context, org, event, ulid string) (*Photo, error) {
	if !ValidULID(ulid) {
		return nil, notFound("photo", ulid)
	}
	if _, err := p.cfg.Events.Event(ctx, org, event); err != nil {
		return nil, err
	}
	return p.cfg.Index.Delete(ctx, org, event, ulid)
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
func (p *Privacy) RemoveBib(ctx context.Context, org, event, bib, mode string) (PrivacyResult, error) {
	if err := CheckBib("bib", bib); err != nil {
		return PrivacyResult{}, err
	}
	if mode != HideMode && mode != DeleteMode {
		return PrivacyResult{}, Invalid("mode", "must be hide or delete", printable(mode))
	}
	if _, err := p.cfg.Events.Event(ctx, org, event); err != nil {
		return PrivacyResult{}, err
	}
	r := PrivacyRequest{Org: org, Event: event, Bib: bib, Mode: mode}
	mode, err := p.cfg.Requests.HideBib(ctx, r)
	if err != nil {
		return PrivacyResult{}, err
	}
	r.Mode = mode
	n, err := p.cfg.Index.RemoveBib(ctx, r, p.cfg.Now())
	return PrivacyResult{Mode: mode, Changed: n}, err
}
