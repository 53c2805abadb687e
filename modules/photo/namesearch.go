package photo

import (
	"context"
	"fmt"
	"strings"
)

// Name search bounds: a page holds at most MaxNamePage runners (each
// costs one count of the bib's index entries), and paging goes at most
// MaxNameOffset runners deep (a ranked search is read from its top).
const (
	DefaultNamePage = 20
	MaxNamePage     = 50
	MaxNameOffset   = 1000
	MaxNameQueryLen = 100
)

// NameQuery asks for one page of an event's runners whose names are like
// Name, best first.
type NameQuery struct {
	// Org and Event name the event; an event of another organizer is
	// ErrNotFound.
	Org, Event string
	// Name is what the caller typed.
	Name string
	// Offset skips that many runners of the ranking; Limit is the most
	// runners to return.
	Offset, Limit int
}

// NameMatch is a runner a name search found, with how many photos show
// their bib.
type NameMatch struct {
	Bib    string
	Name   string
	Photos int
}

// NamePage is a page of a name search.
type NamePage struct {
	Runners []NameMatch
	// NextOffset is the offset of the next page, 0 on the last one.
	NextOffset int
}

// RunnerNames finds an event's runners by name (pgstore).
type RunnerNames interface {
	// FindRunners returns up to q.Limit of the event's runners whose names
	// are like q.Name (typo-tolerant, or starting with it, or with a word
	// starting with it), best first, after the first q.Offset; runners
	// whose bib is hidden at their request never.
	FindRunners(ctx context.Context, q NameQuery) ([]Runner, error)
}

// BibCounter counts the photos showing each bib of an event (dynamostore).
type BibCounter interface {
	CountBibs(ctx context.Context, org, event string, bibs []string) (map[string]int, error)
}

// checkNameQuery trims q.Name and checks q's fields.
func checkNameQuery(q *NameQuery) error {
	var ps problems
	q.Name = strings.TrimSpace(q.Name)
	checkText(&ps, "name", q.Name, true, MaxNameQueryLen)
	if q.Limit == 0 {
		q.Limit = DefaultNamePage
	}
	if q.Limit < 1 || q.Limit > MaxNamePage {
		ps.add("limit", fmt.Sprintf("must be between 1 and %d", MaxNamePage), q.Limit)
	}
	if q.Offset < 0 || q.Offset > MaxNameOffset {
		ps.add("offset", fmt.Sprintf("must be between 0 and %d", MaxNameOffset), q.Offset)
	}
	return ps.err()
}

// ByName finds an event of org's runners by name: typo-tolerant (Hangul
// and Latin), also by prefix, best first, with their photo counts. A bib
// hidden at its runner's request is never found.
func (s *Search) ByName(ctx context.Context, q NameQuery) (NamePage, error) {
	defer s.searched(SearchName)()
	if err := checkNameQuery(&q); err != nil {
		return NamePage{}, err
	}
	if _, err := s.cfg.Truth.Event(ctx, q.Org, q.Event); err != nil {
		return NamePage{}, err
	}
	return s.byName(ctx, q)
}

// PublicByName is ByName for anyone, over a published event whose
// organizer turned its public name search on; any other event is
// ErrNotFound, as an unpublished one is to the public bib search.
func (s *Search) PublicByName(ctx context.Context, event string, q NameQuery) (NamePage, error) {
	defer s.searched(SearchPublicName)()
	if err := checkNameQuery(&q); err != nil {
		return NamePage{}, err
	}
	ev, err := s.cfg.Truth.PublishedEvent(ctx, event)
	if err != nil {
		return NamePage{}, err
	}
	if !ev.PublicNameSearch {
		return NamePage{}, notFound("event", event)
	}
	q.Org, q.Event = ev.OrganizerID, event
	return s.byName(ctx, q)
}

// PublicEvent returns a published event, for the runner page (its name,
// and whether its public name search is on); any other is ErrNotFound.
func (s *Search) PublicEvent(ctx context.Context, event string) (Event, error) {
	if err := CheckID("eventId", event); err != nil {
		return Event{}, err
	}
	return s.cfg.Truth.PublishedEvent(ctx, event)
}

func (s *Search) byName(ctx context.Context, q NameQuery) (NamePage, error) {
	want := q.Limit
	q.Limit++ // one more tells whether there is a next page
	rs, err := s.cfg.Names.FindRunners(ctx, q)
	if err != nil {
		return NamePage{}, err
	}
	out := NamePage{Runners: make([]NameMatch, 0, min(len(rs), want))}
	if len(rs) > want {
		rs, out.NextOffset = rs[:want], q.Offset+want
	}
	bibs := make([]string, len(rs))
	for i, r := range rs {
		bibs[i] = r.Bib
	}
	counts, err := s.cfg.Counts.CountBibs(ctx, q.Org, q.Event, bibs)
	if err != nil {
		return NamePage{}, err
	}
	for _, r := range rs {
		out.Runners = append(out.Runners, NameMatch{Bib: r.Bib, Name: r.Name, Photos: counts[r.Bib]})
	}
	return out, nil
}
