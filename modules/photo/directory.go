package photo

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Directory is the organizers' role over the truth: organizers, their
// events, photographers, assignments and runners, and the copies of
// photographers' profiles on their photos (SyncPhotographer, Reconcile;
// UpdatePhotographer syncs). photo-api builds it
// (services/internal/photobackend) for its admin, directory and sync
// routes. It is safe for concurrent use.
type Directory struct {
	cfg DirectoryConfig
}

// DirectoryConfig configures a Directory. Every store but Photos and
// Copies is the truth (pgstore); those two are the index (dynamostore).
type DirectoryConfig struct {
	// Organizers keeps the organizers.
	Organizers OrganizerStore
	// Events keeps the organizers' events.
	Events EventStore
	// Photographers keeps the photographers and their profile versions.
	Photographers PhotographerStore
	// Assignments keeps which photographers shoot which events.
	Assignments AssignmentStore
	// Runners keeps each event's runners.
	Runners RunnerStore
	// Checkpoints keeps the sync walks' checkpoints.
	Checkpoints SyncStore
	// Photos pages through a photographer's photos, for the sync walk and
	// Reconcile.
	Photos PhotographerIndex
	// Copies writes a photographer's profile onto their photos.
	Copies ProfileIndex
	// Now returns the time the rewritten photos are stamped with (default
	// time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
}

func (c DirectoryConfig) withDefaults() DirectoryConfig {
	c.Now, c.Log = defaultNow(c.Now), defaultLog(c.Log)
	return c
}

// NewDirectory returns a Directory.
func NewDirectory(cfg DirectoryConfig) *Directory {
	return &Directory{cfg: cfg.withDefaults()}
}

// CreateOrganizer creates an organizer (an admin operation).
func (dir *Directory) CreateOrganizer(ctx context.Context, o Organizer) (Organizer, error) {
	var ps problems
	checkID(&ps, "organizerId", o.ID)
	checkText(&ps, "name", o.Name, true, MaxNameLen)
	if err := ps.err(); err != nil {
		return Organizer{}, err
	}
	return dir.cfg.Organizers.CreateOrganizer(ctx, o)
}

// Organizer returns an organizer.
func (dir *Directory) Organizer(ctx context.Context, id string) (Organizer, error) {
	if !ValidID(id) {
		return Organizer{}, notFound("organizer", id)
	}
	return dir.cfg.Organizers.Organizer(ctx, id)
}

// ListOrganizers lists every organizer.
func (dir *Directory) ListOrganizers(ctx context.Context) ([]Organizer, error) {
	return dir.cfg.Organizers.ListOrganizers(ctx)
}

// CreateEvent creates an event of org.
func (dir *Directory) CreateEvent(ctx context.Context, org string, e Event) (Event, error) {
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
	return dir.cfg.Events.CreateEvent(ctx, e)
}

// UpdateEvent renames or (un)publishes an event of org.
func (dir *Directory) UpdateEvent(ctx context.Context, org, id string, p EventPatch) (Event, error) {
	if p.Name != nil {
		var ps problems
		checkText(&ps, "name", *p.Name, true, MaxNameLen)
		if err := ps.err(); err != nil {
			return Event{}, err
		}
	}
	return dir.cfg.Events.UpdateEvent(ctx, org, id, p)
}

// Event returns an event of org.
func (dir *Directory) Event(ctx context.Context, org, id string) (Event, error) {
	return dir.cfg.Events.Event(ctx, org, id)
}

// ListEvents lists org's events.
func (dir *Directory) ListEvents(ctx context.Context, org string) ([]Event, error) {
	return dir.cfg.Events.ListEvents(ctx, org)
}

// CreatePhotographer creates a photographer of org.
func (dir *Directory) CreatePhotographer(ctx context.Context, org string, p Photographer) (Photographer, error) {
	var ps problems
	checkID(&ps, "photographerId", p.ID)
	checkText(&ps, "handle", p.Handle, true, MaxHandleLen)
	checkText(&ps, "displayName", p.DisplayName, true, MaxDisplayNameLen)
	if err := ps.err(); err != nil {
		return Photographer{}, err
	}
	p.OrganizerID = org
	return dir.cfg.Photographers.CreatePhotographer(ctx, p)
}

// Photographer returns a photographer of org.
func (dir *Directory) Photographer(ctx context.Context, org, id string) (Photographer, error) {
	return dir.cfg.Photographers.Photographer(ctx, org, id)
}

// ListPhotographers lists org's photographers.
func (dir *Directory) ListPhotographers(ctx context.Context, org string) ([]Photographer, error) {
	return dir.cfg.Photographers.ListPhotographers(ctx, org)
}

// UpdatePhotographer changes a photographer's handle or display name in
// Postgres and then copies the change onto their photos (SyncPhotographer).
// If the copy is interrupted, the Postgres change stands and the walk
// resumes from its checkpoint on the next SyncPhotographer.
func (dir *Directory) UpdatePhotographer(ctx context.Context, org, id string, p PhotographerPatch, opt SyncOptions) (Photographer, SyncReport, error) {
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
	ph, err := dir.cfg.Photographers.UpdatePhotographer(ctx, org, id, p)
	if err != nil {
		return Photographer{}, SyncReport{}, err
	}
	rep, err := dir.SyncPhotographer(ctx, org, id, opt)
	if err != nil {
		return ph, rep, fmt.Errorf("photographer updated; sync of their photos incomplete (resume with sync): %w", err)
	}
	return ph, rep, nil
}

// Assign assigns a photographer of org to an event of org.
func (dir *Directory) Assign(ctx context.Context, org, event, photographer string) error {
	if _, err := dir.cfg.Events.Event(ctx, org, event); err != nil {
		return err
	}
	if _, err := dir.cfg.Photographers.Photographer(ctx, org, photographer); err != nil {
		return err
	}
	return dir.cfg.Assignments.Assign(ctx, org, event, photographer)
}

// Unassign removes a photographer from an event. Their photos stay.
func (dir *Directory) Unassign(ctx context.Context, org, event, photographer string) error {
	return dir.cfg.Assignments.Unassign(ctx, org, event, photographer)
}

// Assigned lists the photographers assigned to an event of org.
func (dir *Directory) Assigned(ctx context.Context, org, event string) ([]Photographer, error) {
	return dir.cfg.Assignments.Assigned(ctx, org, event)
}

// ImportRunners validates and upserts an event's runners (bib → name). The
// whole import is rejected if any row is invalid.
func (dir *Directory) ImportRunners(ctx context.Context, org, event string, rs []Runner) (int, error) {
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
	if _, err := dir.cfg.Events.Event(ctx, org, event); err != nil {
		return 0, err
	}
	return dir.cfg.Runners.ImportRunners(ctx, org, event, rs)
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
func (dir *Directory) ListRunners(ctx context.Context, org, event, after string, limit int) (RunnerPage, error) {
	if after != "" {
		if err := CheckBib("after", after); err != nil {
			return RunnerPage{}, err
		}
	}
	if limit < 1 || limit > 1000 {
		return RunnerPage{}, Invalid("limit", "must be between 1 and 1000", limit)
	}
	// One more than asked says whether a next page exists.
	rs, err := dir.cfg.Runners.ListRunners(ctx, RunnerQuery{Org: org, Event: event, After: after, Limit: limit + 1})
	if err != nil || len(rs) <= limit {
		return RunnerPage{Runners: rs}, err
	}
	return RunnerPage{Runners: rs[:limit], NextAfter: rs[limit-1].Bib}, nil
}
