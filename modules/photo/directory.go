package photo

import (
	"context"
	"fmt"
	"time"
)

// CreateOrganizer creates an organizer (an admin operation).
func (s *Service) CreateOrganizer(ctx context.Context, o Organizer) (Organizer, error) {
	var ps problems
	checkID(&ps, "organizerId", o.ID)
	checkText(&ps, "name", o.Name, true, MaxNameLen)
	if err := ps.err(); err != nil {
		return Organizer{}, err
	}
	return s.truth.CreateOrganizer(ctx, o)
}

// Organizer returns an organizer.
func (s *Service) Organizer(ctx context.Context, id string) (Organizer, error) {
	if !ValidID(id) {
		return Organizer{}, notFound("organizer", id)
	}
	return s.truth.Organizer(ctx, id)
}

// ListOrganizers lists every organizer.
func (s *Service) ListOrganizers(ctx context.Context) ([]Organizer, error) {
	return s.truth.ListOrganizers(ctx)
}

// CreateEvent creates an event of org.
func (s *Service) CreateEvent(ctx context.Context, org string, e Event) (Event, error) {
	var ps problems
	checkID(&ps, "eventId", e.ID)
	checkText(&ps, "name", e.Name, true, MaxNameLen)
	if e.StartsOn != "" {
		if d, err := time.Parse(time.DateOnly, e.StartsOn); err != nil || d.Year() < 1900 {
			ps.add("startsOn", "must be a date YYYY-MM-DD from 1900 on", printable(e.StartsOn))
		}
	}
	if err := ps.err(); err != nil {
		return Event{}, err
	}
	e.OrganizerID = org
	return s.truth.CreateEvent(ctx, e)
}

// UpdateEvent renames or (un)publishes an event of org.
func (s *Service) UpdateEvent(ctx context.Context, org, id string, p EventPatch) (Event, error) {
	if p.Name != nil {
		var ps problems
		checkText(&ps, "name", *p.Name, true, MaxNameLen)
		if err := ps.err(); err != nil {
			return Event{}, err
		}
	}
	return s.truth.UpdateEvent(ctx, org, id, p)
}

// Event returns an event of org.
func (s *Service) Event(ctx context.Context, org, id string) (Event, error) {
	return s.truth.Event(ctx, org, id)
}

// ListEvents lists org's events.
func (s *Service) ListEvents(ctx context.Context, org string) ([]Event, error) {
	return s.truth.ListEvents(ctx, org)
}

// CreatePhotographer creates a photographer of org.
func (s *Service) CreatePhotographer(ctx context.Context, org string, p Photographer) (Photographer, error) {
	var ps problems
	checkID(&ps, "photographerId", p.ID)
	checkText(&ps, "handle", p.Handle, true, MaxHandleLen)
	checkText(&ps, "displayName", p.DisplayName, true, MaxDisplayNameLen)
	if err := ps.err(); err != nil {
		return Photographer{}, err
	}
	p.OrganizerID = org
	return s.truth.CreatePhotographer(ctx, p)
}

// Photographer returns a photographer of org.
func (s *Service) Photographer(ctx context.Context, org, id string) (Photographer, error) {
	return s.truth.Photographer(ctx, org, id)
}

// ListPhotographers lists org's photographers.
func (s *Service) ListPhotographers(ctx context.Context, org string) ([]Photographer, error) {
	return s.truth.ListPhotographers(ctx, org)
}

// UpdatePhotographer changes a photographer's handle or display name in
// Postgres and then copies the change onto their photos (SyncPhotographer).
// If the copy is interrupted, the Postgres change stands and the walk
// resumes from its checkpoint on the next SyncPhotographer.
func (s *Service) UpdatePhotographer(ctx context.Context, org, id string, p PhotographerPatch, opt SyncOptions) (Photographer, SyncReport, error) {
	var ps problems
	if p.Handle == nil && p.DisplayName == nil {
		ps.add("handle", "give handle or displayName (or both) to change", nil)
	}
	if p.Handle != nil {
		checkText(&ps, "handle", *p.Handle, true, MaxHandleLen)
	}
	if p.DisplayName != nil {
		checkText(&ps, "displayName", *p.DisplayName, true, MaxDisplayNameLen)
	}
	if err := ps.err(); err != nil {
		return Photographer{}, SyncReport{}, err
	}
	ph, err := s.truth.UpdatePhotographer(ctx, org, id, p)
	if err != nil {
		return Photographer{}, SyncReport{}, err
	}
	rep, err := s.SyncPhotographer(ctx, org, id, opt)
	if err != nil {
		return ph, rep, fmt.Errorf("photographer updated; sync of their photos incomplete (resume with sync): %w", err)
	}
	return ph, rep, nil
}

// Assign assigns a photographer of org to an event of org.
func (s *Service) Assign(ctx context.Context, org, event, photographer string) error {
	if _, err := s.truth.Event(ctx, org, event); err != nil {
		return err
	}
	if _, err := s.truth.Photographer(ctx, org, photographer); err != nil {
		return err
	}
	return s.truth.Assign(ctx, org, event, photographer)
}

// Unassign removes a photographer from an event. Their photos stay.
func (s *Service) Unassign(ctx context.Context, org, event, photographer string) error {
	return s.truth.Unassign(ctx, org, event, photographer)
}

// Assigned lists the photographers assigned to an event of org.
func (s *Service) Assigned(ctx context.Context, org, event string) ([]Photographer, error) {
	return s.truth.Assigned(ctx, org, event)
}

// ImportRunners validates and upserts an event's runners (bib → name). The
// whole import is rejected if any row is invalid.
func (s *Service) ImportRunners(ctx context.Context, org, event string, rs []Runner) (int, error) {
	var ps problems
	if len(rs) > MaxRunnersImport {
		ps.add("runners", fmt.Sprintf("holds more than %d runners", MaxRunnersImport), len(rs))
		return 0, ps.err()
	}
	seen := make(map[string]int, len(rs))
	for i, r := range rs {
		if !ValidBib(r.Bib) {
			ps.add(fmt.Sprintf("runners[%d].bib", i), "must match "+BibPattern, printable(r.Bib))
		} else if j, dup := seen[r.Bib]; dup {
			ps.add(fmt.Sprintf("runners[%d].bib", i), fmt.Sprintf("repeats runners[%d].bib", j), r.Bib)
		}
		seen[r.Bib] = i
		checkText(&ps, fmt.Sprintf("runners[%d].name", i), r.Name, true, MaxNameLen)
		if len(ps.list) > 50 {
			break
		}
	}
	if err := ps.err(); err != nil {
		return 0, err
	}
	if _, err := s.truth.Event(ctx, org, event); err != nil {
		return 0, err
	}
	return s.truth.ImportRunners(ctx, org, event, rs)
}

// RunnerPage is one page of an event's runners, by bib.
type RunnerPage struct {
	Runners []Runner
	// NextAfter is the bib to list after for the next page; "" on the last
	// page, so a listing never ends with an empty page.
	NextAfter string
}

// ListRunners lists an event's runners by bib, after the given bib ("" for
// the first page), at most limit of them.
func (s *Service) ListRunners(ctx context.Context, org, event, after string, limit int) (RunnerPage, error) {
	if after != "" {
		if err := CheckBib("after", after); err != nil {
			return RunnerPage{}, err
		}
	}
	if limit < 1 || limit > 1000 {
		return RunnerPage{}, Invalid("limit", "must be between 1 and 1000", limit)
	}
	// One more than asked says whether a next page exists.
	rs, err := s.truth.ListRunners(ctx, org, event, after, limit+1)
	if err != nil || len(rs) <= limit {
		return RunnerPage{Runners: rs}, err
	}
	return RunnerPage{Runners: rs[:limit], NextAfter: rs[limit-1].Bib}, nil
}
