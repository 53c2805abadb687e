package photo

import (
	"context"
	"time"
)

// The persistence the domain needs is declared as small interfaces, one per
// use, and each role's config (IngestConfig, SearchConfig, DirectoryConfig,
// PrivacyConfig) names the ones it uses. One concrete store of each side
// implements them all: pgstore on Postgres (the truth), dynamostore on
// DynamoDB (the index). Not-found, conflict and invalid-input failures are
// the package's sentinels (ErrNotFound, ErrConflict, ErrInvalid,
// ErrCursor); anything else is an infrastructure error.

// OrganizerStore keeps organizers (the tenants).
type OrganizerStore interface {
	CreateOrganizer(ctx context.Context, o Organizer) (Organizer, error)
	Organizer(ctx context.Context, id string) (Organizer, error)
	ListOrganizers(ctx context.Context) ([]Organizer, error)
}

// EventReader reads one event of an organizer.
type EventReader interface {
	Event(ctx context.Context, org, id string) (Event, error)
}

// EventStore keeps an organizer's events.
type EventStore interface {
	EventReader
	CreateEvent(ctx context.Context, e Event) (Event, error)
	UpdateEvent(ctx context.Context, org, id string, p EventPatch) (Event, error)
	ListEvents(ctx context.Context, org string) ([]Event, error)
}

// PhotographerReader reads one photographer of an organizer.
type PhotographerReader interface {
	Photographer(ctx context.Context, org, id string) (Photographer, error)
}

// ProfileReader is what settling a photographer's copies reads: the
// current profile versions, and the profile when it moved on.
type ProfileReader interface {
	PhotographerReader
	// PhotographerVersions returns the current profile versions.
	PhotographerVersions(ctx context.Context, ids []string) (map[string]int64, error)
}

// PhotographerStore keeps an organizer's photographers and their profile
// versions.
type PhotographerStore interface {
	ProfileReader
	CreatePhotographer(ctx context.Context, p Photographer) (Photographer, error)
	// UpdatePhotographer applies p, bumps Version and resets the
	// photographer's sync checkpoint to the new version, atomically.
	UpdatePhotographer(ctx context.Context, org, id string, p PhotographerPatch) (Photographer, error)
	ListPhotographers(ctx context.Context, org string) ([]Photographer, error)
}

// AssignmentStore keeps which photographers shoot which events.
type AssignmentStore interface {
	Assign(ctx context.Context, org, event, photographer string) error
	Unassign(ctx context.Context, org, event, photographer string) error
	Assigned(ctx context.Context, org, event string) ([]Photographer, error)
}

// RunnerQuery asks for one page of an event's runners, by bib.
type RunnerQuery struct {
	// Org and Event name the event; an event of another organizer is
	// ErrNotFound.
	Org, Event string
	// After is the bib to list after ("" for the first page).
	After string
	// Limit is the most runners to return.
	Limit int
}

// RunnerStore keeps each event's runners, by bib.
type RunnerStore interface {
	// ImportRunners upserts runners by (event, bib) and returns how many
	// rows it wrote.
	ImportRunners(ctx context.Context, org, event string, rs []Runner) (int, error)
	// ListRunners lists runners by bib, after q.After.
	ListRunners(ctx context.Context, q RunnerQuery) ([]Runner, error)
}

// TimingStore keeps an event's timing: its timing points, its
// photographers' positions, their camera clocks, and runners' splits.
type TimingStore interface {
	// PutTimingPoint creates or replaces a timing point of an event of
	// org.
	PutTimingPoint(ctx context.Context, org string, p TimingPoint) (TimingPoint, error)
	// TimingPoints lists an event's timing points by distance.
	TimingPoints(ctx context.Context, org, event string) ([]TimingPoint, error)
	// SetPosition creates or replaces a photographer's position in an
	// event; the photographer must be assigned to it and the timing point
	// must be the event's (else ErrNotFound). It refuses a new position
	// beyond MaxPositions with ErrInvalid.
	SetPosition(ctx context.Context, org string, p Position) (Position, error)
	// Positions lists an event's positions, with each photographer's clock
	// offset.
	Positions(ctx context.Context, org, event string) ([]Position, error)
	// SetClock sets a photographer's camera clock offset.
	SetClock(ctx context.Context, org, photographer string, seconds int) error
	// ImportSplits upserts splits by (event, bib, point) in one statement
	// and returns how many rows it wrote.
	ImportSplits(ctx context.Context, org, event string, ss []Split) (int, error)
}

// NearbyPlan is what the search by passing time reads from the truth
// about one bib of an event.
type NearbyPlan struct {
	// Hidden: a runner's privacy request covers the bib, so nothing is
	// found for it.
	Hidden bool
	// Points are the event's timing points, Positions its photographers'
	// (with their clock offsets), Splits the bib's.
	Points    []TimingPoint
	Positions []Position
	Splits    []Split
}

// NearbyTruth is what the search by passing time reads from the truth.
type NearbyTruth interface {
	// NearbyPlan reads, for a bib of an event, its privacy request, its
	// splits, and the event's timing points and positions.
	NearbyPlan(ctx context.Context, event, bib string) (NearbyPlan, error)
}

// SearchTruth is what the searches read from the truth: the event searched
// (a published one for the public search), the photographer and the events
// they are assigned to, and the runner wearing a bib.
type SearchTruth interface {
	EventReader
	PhotographerReader
	// PublishedEvent returns an event of any organizer if it is published.
	PublishedEvent(ctx context.Context, id string) (Event, error)
	// PhotographerEvents lists the events of org the photographer is
	// assigned to.
	PhotographerEvents(ctx context.Context, org, photographer string) ([]string, error)
	// Runners returns the given bibs' runners among the event's.
	Runners(ctx context.Context, event string, bibs []string) (map[string]Runner, error)
}

// IngestQuery names what ingest needs to know about one event.
type IngestQuery struct {
	// Org and Event name the event; an event of another organizer is
	// ErrNotFound.
	Org, Event string
	// Photographers and Bibs are the ids and bibs the records name, each
	// once.
	Photographers, Bibs []string
}

// IngestSource is what ingest reads from the truth: what a record is
// validated against, and the privacy requests again after the writes.
type IngestSource interface {
	// IngestTruth loads, for one event, the given photographers and bibs
	// as ingest needs them. A missing event (or another org's) is
	// ErrNotFound.
	IngestTruth(ctx context.Context, q IngestQuery) (IngestTruth, error)
	// HiddenBibs returns the privacy requests among bibs in event: bib →
	// HideMode or DeleteMode.
	HiddenBibs(ctx context.Context, event string, bibs []string) (map[string]string, error)
}

// PrivacyRequest is a runner's privacy request for a bib in an event.
type PrivacyRequest struct {
	// Org and Event name the event.
	Org, Event string
	// Bib is the bib whose photos the runner asks about.
	Bib string
	// Mode is HideMode or DeleteMode.
	Mode string
}

// PrivacyStore records runners' privacy requests.
type PrivacyStore interface {
	// HideBib records a runner's privacy request and returns the mode now
	// in force: DeleteMode outranks HideMode. An event of another
	// organizer is ErrNotFound.
	HideBib(ctx context.Context, r PrivacyRequest) (string, error)
}

// SyncStore keeps the checkpoints of the photographer-sync walks.
type SyncStore interface {
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

// The index ports act within one organizer (org): nothing of another
// organizer is readable or writable through them.

// IngestIndex is what ingest writes: PHOTO items and their BIB_INDEX
// items, and the privacy requests that raced the writes.
type IngestIndex interface {
	// Create writes one photo and its BIB_INDEX items atomically, only if no
	// photo with its ulid exists.
	Create(ctx context.Context, p *Photo) (WriteResult, error)
	// CreateBatch writes many photos of one organizer with batch writes;
	// results are in the order of ps. See the adapter for how each photo
	// stays atomic to readers.
	CreateBatch(ctx context.Context, org string, ps []*Photo) ([]WriteResult, error)
	// ApplyPrivacy applies a privacy request to one photo (ulid) as
	// RemovalIndex.RemoveBib does, reading it strongly consistently: a
	// hide strikes the bib, a delete deletes the photo if it shows the bib
	// or had it hidden, and an index entry for the bib that the photo does
	// not back is dropped. An absent photo is left alone. It returns the
	// photo as it is afterwards (nil if absent) and whether it deleted it.
	ApplyPrivacy(ctx context.Context, r PrivacyRequest, ulid string, now time.Time) (*Photo, bool, error)
}

// BibQuery names the photos of an event that show a bib.
type BibQuery struct {
	Org, Event, Bib string
}

// PhotographerQuery names a photographer's photos in some events.
type PhotographerQuery struct {
	Org, Photographer string
	// Events are the events searched (at most MaxSearchEvents). None means
	// every photo of the photographer, in index order.
	Events []string
}

// PhotographerIndex pages through a photographer's photos.
type PhotographerIndex interface {
	// ByPhotographer lists a photographer's photos in q.Events, newest
	// first: one timeline across them. With no events it lists all their
	// photos in index order (by event, then createdAt), for walks that must
	// see every photo.
	ByPhotographer(ctx context.Context, q PhotographerQuery, r PageRequest) (Page, error)
}

// TimeStream is one photographer's photos taken within [From, To] by
// their camera's clock (createdAt).
type TimeStream struct {
	Photographer string
	From, To     time.Time
	// Clock is the photographer's camera clock offset: a photo's corrected
	// capture time is its createdAt plus Clock.
	Clock time.Duration
}

// TimeQuery names the photos of an event that some photographers took in
// some time ranges: one stream per photographer (at most MaxPositions).
type TimeQuery struct {
	Org, Event string
	Streams    []TimeStream
}

// SearchIndex is what the searches read.
type SearchIndex interface {
	PhotographerIndex
	// ByTime lists the photos of q's streams as one timeline, by corrected
	// capture time (createdAt plus the stream's Clock), earliest first:
	// one Query per stream that still has photos, per page.
	ByTime(ctx context.Context, q TimeQuery, r PageRequest) (Page, error)
	Get(ctx context.Context, org, event, ulid string) (*Photo, error)
	// Gallery lists an event's photos, newest first.
	Gallery(ctx context.Context, org, event string, r PageRequest) (Page, error)
	// ByBib lists the photos showing q.Bib, newest first.
	ByBib(ctx context.Context, q BibQuery, r PageRequest) (Page, error)
}

// ProfileIndex is what copies a photographer's profile onto their photos
// (the sync walk, Reconcile's repairs, and ingest settling a rename that
// raced it).
type ProfileIndex interface {
	// SetPhotographer copies a photographer's profile onto one photo, if it
	// still exists and is still theirs; it reports whether it wrote.
	SetPhotographer(ctx context.Context, p *Photo, ph Photographer, now time.Time) (bool, error)
}

// RemovalIndex is what deletes and privacy requests write.
type RemovalIndex interface {
	// Delete deletes a photo and its BIB_INDEX items together and returns
	// what was deleted.
	Delete(ctx context.Context, org, event, ulid string) (*Photo, error)
	// RemoveBib removes a bib from an event: in HideMode its BIB_INDEX items
	// are deleted and the bib struck from each photo; in DeleteMode each
	// photo showing it is deleted with all its index entries. It returns how
	// many photos it changed.
	RemoveBib(ctx context.Context, r PrivacyRequest, now time.Time) (int, error)
}
