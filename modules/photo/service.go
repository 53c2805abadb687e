package photo

import (
	"context"
	"log/slog"
	"time"
)

// Directory is the part of the truth the organizer endpoints manage.
type Directory interface {
	CreateOrganizer(ctx context.Context, o Organizer) (Organizer, error)
	Organizer(ctx context.Context, id string) (Organizer, error)
	ListOrganizers(ctx context.Context) ([]Organizer, error)

	CreateEvent(ctx context.Context, e Event) (Event, error)
	UpdateEvent(ctx context.Context, org, id string, p EventPatch) (Event, error)
	Event(ctx context.Context, org, id string) (Event, error)
	// PublishedEvent returns an event of any organizer if it is published.
	PublishedEvent(ctx context.Context, id string) (Event, error)
	ListEvents(ctx context.Context, org string) ([]Event, error)

	CreatePhotographer(ctx context.Context, p Photographer) (Photographer, error)
	// UpdatePhotographer applies p, bumps Version and resets the
	// photographer's sync checkpoint to the new version, atomically.
	UpdatePhotographer(ctx context.Context, org, id string, p PhotographerPatch) (Photographer, error)
	Photographer(ctx context.Context, org, id string) (Photographer, error)
	ListPhotographers(ctx context.Context, org string) ([]Photographer, error)

	Assign(ctx context.Context, org, event, photographer string) error
	Unassign(ctx context.Context, org, event, photographer string) error
	Assigned(ctx context.Context, org, event string) ([]Photographer, error)

	// ImportRunners upserts runners by (event, bib) and returns how many
	// rows it wrote.
	ImportRunners(ctx context.Context, org, event string, rs []Runner) (int, error)
	// ListRunners lists runners by bib, after the given bib.
	ListRunners(ctx context.Context, org, event, after string, limit int) ([]Runner, error)
}

// Truth is everything the service reads from and writes to Postgres.
type Truth interface {
	Directory

	// IngestTruth loads, for one event of org, the given photographers and
	// bibs as ingest needs them. A missing event (or another org's) is
	// ErrNotFound.
	IngestTruth(ctx context.Context, org, event string, photographers, bibs []string) (IngestTruth, error)
	// PhotographerEvents lists the events of org the photographer is
	// assigned to.
	PhotographerEvents(ctx context.Context, org, photographer string) ([]string, error)
	// Runners returns the given bibs' runners among the event's.
	Runners(ctx context.Context, event string, bibs []string) (map[string]Runner, error)
	// PhotographerVersions returns the current profile versions.
	PhotographerVersions(ctx context.Context, ids []string) (map[string]int64, error)
	// HideBib records a runner's privacy request for a bib and returns the
	// mode now in force: DeleteMode outranks HideMode.
	HideBib(ctx context.Context, org, event, bib, mode string) (string, error)
	// HiddenBibs returns the privacy requests among bibs in event: bib →
	// HideMode or DeleteMode.
	HiddenBibs(ctx context.Context, event string, bibs []string) (map[string]string, error)

	// SyncState returns the photographer's sync checkpoint, creating one at
	// the current profile version if there is none.
	SyncState(ctx context.Context, photographer string) (SyncState, error)
	// SaveSyncState stores a checkpoint; ErrConflict if the checkpoint's
	// version is no longer current (a newer change restarted the walk).
	SaveSyncState(ctx context.Context, s SyncState) error
}

// PageRequest asks for one page of a listing.
type PageRequest struct {
	Limit  int
	Cursor string
}

// Page is one page of photos, with the cursor of the next ("" on the last).
type Page struct {
	Photos []*Photo
	Cursor string
}

// WriteStatus is the outcome of writing one photo.
type WriteStatus string

// Write outcomes.
const (
	// Created: the photo and its index entries were written.
	Created WriteStatus = "created"
	// Exists: a photo with this ulid already existed; nothing was written.
	Exists WriteStatus = "exists"
	// Failed: the write did not complete (Err says why); retrying the same
	// record is safe.
	Failed WriteStatus = "failed"
	// Suppressed: not kept, because a runner asked for every photo of one
	// of its bibs in the event to be deleted (SuppressedBibs says which).
	Suppressed WriteStatus = "suppressed"
)

// WriteResult is the outcome of writing one photo.
type WriteResult struct {
	Status WriteStatus
	// Photo is the stored photo: the new one, or the one that existed.
	Photo *Photo
	Err   error
}

// Index is the DynamoDB read layer: PHOTO and BIB_INDEX items. Every method
// acts within one organizer (org), and nothing of another organizer is
// readable or writable through it.
type Index interface {
	// Create writes one photo and its BIB_INDEX items atomically, only if no
	// photo with its ulid exists.
	Create(ctx context.Context, p *Photo) (WriteResult, error)
	// CreateBatch writes many photos of one organizer with batch writes;
	// results are in the order of ps. See the adapter for how each photo
	// stays atomic to readers.
	CreateBatch(ctx context.Context, org string, ps []*Photo) ([]WriteResult, error)
	Get(ctx context.Context, org, event, ulid string) (*Photo, error)
	// Gallery lists an event's photos, newest first.
	Gallery(ctx context.Context, org, event string, r PageRequest) (Page, error)
	// ByBib lists the photos showing bib, newest first.
	ByBib(ctx context.Context, org, event, bib string, r PageRequest) (Page, error)
	// ByPhotographer lists a photographer's photos in the given events
	// (at most MaxSearchEvents), newest first: one timeline across them.
	// With no events it lists all their photos in index order (by event,
	// then createdAt), for walks that must see every photo.
	ByPhotographer(ctx context.Context, org, photographer string, events []string, r PageRequest) (Page, error)
	// SetPhotographer copies a photographer's profile onto one photo, if it
	// still exists and is still theirs; it reports whether it wrote.
	SetPhotographer(ctx context.Context, p *Photo, ph Photographer, now time.Time) (bool, error)
	// Delete deletes a photo and its BIB_INDEX items together and returns
	// what was deleted.
	Delete(ctx context.Context, org, event, ulid string) (*Photo, error)
	// RemoveBib removes a bib from an event: in HideMode its BIB_INDEX items
	// are deleted and the bib struck from each photo; in DeleteMode each
	// photo showing it is deleted with all its index entries. It returns how
	// many photos it changed.
	RemoveBib(ctx context.Context, org, event, bib, mode string, now time.Time) (int, error)
	// ApplyPrivacy applies a privacy request for bib (HideMode or
	// DeleteMode) to one photo as RemoveBib does, reading it strongly
	// consistently: a hide strikes the bib, a delete deletes the photo if it
	// shows the bib or had it hidden, and an index entry for the bib that
	// the photo does not back is dropped. An absent photo is left alone. It
	// returns the photo as it is afterwards (nil if absent) and whether it
	// deleted it.
	ApplyPrivacy(ctx context.Context, org, event, ulid, bib, mode string, now time.Time) (*Photo, bool, error)
}

// Config configures a Service.
type Config struct {
	Truth Truth
	Index Index
	// Now returns the time (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
	// Observer, if set, hears ingests and searches (for metrics).
	Observer Observer
}

// Service is PhotoService's domain logic. It is safe for concurrent use.
type Service struct {
	truth Truth
	index Index
	now   func() time.Time
	log   *slog.Logger
	obs   Observer
}

// NewService returns a Service.
func NewService(cfg Config) *Service {
	s := &Service{truth: cfg.Truth, index: cfg.Index, now: cfg.Now, log: cfg.Log, obs: cfg.Observer}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// Truth returns the service's Postgres side.
func (s *Service) Truth() Truth { return s.truth }

// Index returns the service's DynamoDB side.
func (s *Service) Index() Index { return s.index }
