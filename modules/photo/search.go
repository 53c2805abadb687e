package photo

import (
	"context"
	"fmt"
	"time"
)

// Search is the searches' role: organizers' searches of their events'
// photos (the gallery, one photo, by bib, by photographer, by a runner's
// passing time) and runners' public searches by bib and by passing time. It only reads. photo-api builds it
// (services/internal/photobackend) for its search and public routes. It is
// safe for concurrent use.
type Search struct {
	cfg SearchConfig
}

// SearchConfig configures a Search.
type SearchConfig struct {
	// Truth holds the events, photographers and runners a search checks
	// (pgstore).
	Truth SearchTruth
	// Nearby reads a bib's splits and the event's timing for the search by
	// passing time (pgstore).
	Nearby NearbyTruth
	// Index holds the photos (dynamostore).
	Index SearchIndex
	// Names finds runners by name (pgstore), and Counts counts their
	// photos (dynamostore): the name searches need both.
	Names  RunnerNames
	Counts BibCounter
	// Observer, if set, hears every search (for metrics).
	Observer Observer
}

// NewSearch returns a Search.
func NewSearch(cfg SearchConfig) *Search {
	return &Search{cfg: cfg}
}

// Page sizes.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// Cursor lengths: a merge's cursor holds a position per event.
const (
	maxCursor      = 4096
	maxMergeCursor = 16384
)

func checkPage(r *PageRequest, maxLen int) error {
	if r.Limit == 0 {
		r.Limit = DefaultPageSize
	}
	if r.Limit < 1 || r.Limit > MaxPageSize {
		return Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxPageSize), r.Limit)
	}
	if len(r.Cursor) > maxLen {
		return fmt.Errorf("%w: too long", ErrCursor)
	}
	return nil
}

// Gallery lists an event's photos, newest first.
func (s *Search) Gallery(ctx context.Context, org, event string, r PageRequest) (Page, error) {
	defer s.searched(SearchGallery)()
	if err := checkPage(&r, maxCursor); err != nil {
		return Page{}, err
	}
	if _, err := s.cfg.Truth.Event(ctx, org, event); err != nil {
		return Page{}, err
	}
	return s.cfg.Index.Gallery(ctx, org, event, r)
}

// Photo returns one photo of an event of org.
func (s *Search) Photo(ctx context.Context, org, event, ulid string) (*Photo, error) {
	if !ValidULID(ulid) {
		return nil, notFound("photo", ulid)
	}
	if _, err := s.cfg.Truth.Event(ctx, org, event); err != nil {
		return nil, err
	}
	return s.cfg.Index.Get(ctx, org, event, ulid)
}

// BibPage is a page of bib search results.
type BibPage struct {
	Page
	Bib string
	// Runner is the runner with this bib, or nil if the bib is not among
	// the event's runners (an unmatched bib).
	Runner *Runner
}

// ByBib lists the photos of an event of org that show bib, newest first:
// one GSI1 query and ⌈n/100⌉ BatchGets of the PHOTO items per page.
func (s *Search) ByBib(ctx context.Context, org, event, bib string, r PageRequest) (BibPage, error) {
	defer s.searched(SearchBib)()
	if err := CheckBib("bib", bib); err != nil {
		return BibPage{}, err
	}
	if err := checkPage(&r, maxCursor); err != nil {
		return BibPage{}, err
	}
	if _, err := s.cfg.Truth.Event(ctx, org, event); err != nil {
		return BibPage{}, err
	}
	p, err := s.cfg.Index.ByBib(ctx, BibQuery{Org: org, Event: event, Bib: bib}, r)
	if err != nil {
		return BibPage{}, err
	}
	out := BibPage{Page: p, Bib: bib}
	rs, err := s.cfg.Truth.Runners(ctx, event, []string{bib})
	if err != nil {
		return BibPage{}, err
	}
	if rn, ok := rs[bib]; ok {
		out.Runner = &rn
	}
	return out, nil
}

// PublicByBib is the runners' search: like ByBib, for any organizer's
// event, but only if the event is published, and without the runner (anyone
// may ask, and a bib must not reveal a name). An unpublished event is
// ErrNotFound.
func (s *Search) PublicByBib(ctx context.Context, event, bib string, r PageRequest) (BibPage, error) {
	defer s.searched(SearchPublicBib)()
	if err := CheckBib("bib", bib); err != nil {
		return BibPage{}, err
	}
	if err := checkPage(&r, maxCursor); err != nil {
		return BibPage{}, err
	}
	ev, err := s.cfg.Truth.PublishedEvent(ctx, event)
	if err != nil {
		return BibPage{}, err
	}
	p, err := s.cfg.Index.ByBib(ctx, BibQuery{Org: ev.OrganizerID, Event: event, Bib: bib}, r)
	if err != nil {
		return BibPage{}, err
	}
	return BibPage{Page: p, Bib: bib}, nil
}

// MaxSearchEvents bounds the events one photographer search reads
// together: each is a stream of the index, and a page costs up to one
// Query per event that still has photos.
const MaxSearchEvents = 32

// ByPhotographer lists a photographer's photos newest first (as the package
// doc defines it), in one event when event is not "", else in every event of org they are
// assigned to (at most MaxSearchEvents; more is an error naming eventId),
// as one timeline. Photos of an event the photographer was unassigned
// from are found by naming the event.
func (s *Search) ByPhotographer(ctx context.Context, org, photographer, event string, r PageRequest) (Page, error) {
	defer s.searched(SearchPhotographer)()
	if err := checkPage(&r, maxMergeCursor); err != nil {
		return Page{}, err
	}
	if _, err := s.cfg.Truth.Photographer(ctx, org, photographer); err != nil {
		return Page{}, err
	}
	events := []string{event}
	if event != "" {
		if _, err := s.cfg.Truth.Event(ctx, org, event); err != nil {
			return Page{}, err
		}
	} else {
		var err error
		if events, err = s.cfg.Truth.PhotographerEvents(ctx, org, photographer); err != nil {
			return Page{}, err
		}
		if len(events) > MaxSearchEvents {
			return Page{}, Invalid("eventId", fmt.Sprintf("is required: the photographer is assigned to %d events, and a search across events covers at most %d", len(events), MaxSearchEvents), nil)
		}
		if len(events) == 0 {
			return Page{Photos: []*Photo{}}, nil
		}
	}
	return s.cfg.Index.ByPhotographer(ctx, PhotographerQuery{Org: org, Photographer: photographer, Events: events}, r)
}

// searched starts timing a search of kind; call what it returns when the
// search ends.
func (s *Search) searched(kind string) func() {
	if s.cfg.Observer == nil {
		return func() {}
	}
	start := time.Now()
	return func() { s.cfg.Observer.Searched(kind, time.Since(start)) }
}
