package photo

import "time"

// Organizer is an organization that runs events (a tenant).
type Organizer struct {
	ID        string    `json:"organizerId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// Event is a race, belonging to one organizer.
type Event struct {
	ID          string `json:"eventId"`
	OrganizerID string `json:"organizerId"`
	Name        string `json:"name"`
	StartsOn    string `json:"startsOn,omitempty" doc:"Race day, YYYY-MM-DD."`
	Published   bool   `json:"published" doc:"Published events are open to public runner search."`
	// PublicNameSearch opens the public name search (runners by name) of
	// a published event; off by default.
	PublicNameSearch bool      `json:"publicNameSearch" doc:"Whether runners may find their bib by name on the public runner page (published events only)."`
	CreatedAt        time.Time `json:"createdAt"`
}

// EventPatch changes an event; nil fields are left alone.
type EventPatch struct {
	Name             *string
	Published        *bool
	PublicNameSearch *bool
}

// Photographer shoots events for an organizer. Handle and DisplayName are
// copied onto their PHOTO items.
type Photographer struct {
	ID          string `json:"photographerId"`
	OrganizerID string `json:"organizerId"`
	Handle      string `json:"handle" doc:"e.g. an Instagram handle."`
	DisplayName string `json:"displayName"`
	// Version counts profile changes; the sync checkpoint is keyed by it.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// PhotographerPatch changes a photographer's profile; nil fields are left
// alone.
type PhotographerPatch struct {
	Handle      *string
	DisplayName *string
}

// Runner is an entrant of an event, by bib.
type Runner struct {
	EventID string `json:"eventId"`
	Bib     string `json:"bib"`
	Name    string `json:"name"`
}

// IngestTruth is what ingest needs to know from Postgres about one event.
type IngestTruth struct {
	Event Event
	// Photographers holds the asked-for photographers that belong to the
	// event's organizer, whether or not they are assigned to it.
	Photographers map[string]Photographer
	// Assigned holds the ids of those assigned to the event.
	Assigned map[string]bool
	// Runners holds the asked-for bibs that are among the event's runners.
	Runners map[string]Runner
	// Hidden holds the asked-for bibs with a runner's privacy request:
	// bib → HideMode or DeleteMode.
	Hidden map[string]string
}

// SyncState is the checkpoint of one photographer's sync walk.
type SyncState struct {
	PhotographerID string
	// Version is the profile version the walk copies.
	Version int64
	// Cursor resumes the GSI2 walk; "" starts it.
	Cursor  string
	Scanned int64
	Updated int64
	Done    bool
}

// Bib-privacy modes.
const (
	// HideMode removes the bib's index entries and strikes the bib from its
	// photos; the photos stay in the gallery.
	HideMode = "hide"
	// DeleteMode deletes every photo that shows the bib.
	DeleteMode = "delete"
)
