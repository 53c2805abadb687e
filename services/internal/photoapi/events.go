package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

type eventBody struct {
	EventID   string `json:"eventId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" example:"seoul-marathon-2024"`
	Name      string `json:"name" minLength:"1" example:"Seoul Marathon 2024"`
	StartsOn  string `json:"startsOn,omitempty" format:"date" example:"2024-11-09"`
	Published bool   `json:"published,omitempty" doc:"Open the event to public runner search."`
	// PublicNameSearch opens the public name search (off by default).
	PublicNameSearch bool `json:"publicNameSearch,omitempty" doc:"Let runners find their bib by name on the public runner page (once the event is published); off by default."`
}

type eventPatchBody struct {
	Name             *string `json:"name,omitempty" minLength:"1"`
	Published        *bool   `json:"published,omitempty"`
	PublicNameSearch *bool   `json:"publicNameSearch,omitempty" doc:"Turn the public name search on or off."`
}

type eventOutput struct{ Body photo.Event }

type eventsOutput struct {
	Body struct {
		Events []photo.Event `json:"events"`
	}
}

// registerEvents adds an organizer's operations on their events.
func (h *handlers) registerEvents(api huma.API) {
	huma.Register(api, server.Op("create-event", http.MethodPost, "/events",
		"Create an event of your organization", tagDirectory, refusals, conflicts, server.Status(http.StatusCreated)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct{ Body eventBody }) (*eventOutput, error) {
			e, err := h.dir.CreateEvent(ctx, org, photo.Event{ID: in.Body.EventID, Name: in.Body.Name, StartsOn: in.Body.StartsOn, Published: in.Body.Published, PublicNameSearch: in.Body.PublicNameSearch})
			return &eventOutput{Body: e}, err
		}))
	huma.Register(api, server.Op("list-events", http.MethodGet, "/events", "List your organization's events", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, _ *struct{}) (*eventsOutput, error) {
			es, err := h.dir.ListEvents(ctx, org)
			out := &eventsOutput{}
			out.Body.Events = es
			return out, err
		}))
	huma.Register(api, server.Op("get-event", http.MethodGet, "/events/{eventId}", "Get an event", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *EventPath) (*eventOutput, error) {
			e, err := h.dir.Event(ctx, org, in.EventID)
			return &eventOutput{Body: e}, err
		}))
	huma.Register(api, server.Op("update-event", http.MethodPatch, "/events/{eventId}", "Rename or (un)publish an event, or turn its public name search on or off", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			Body eventPatchBody
		}) (*eventOutput, error) {
			e, err := h.dir.UpdateEvent(ctx, org, in.EventID, photo.EventPatch{Name: in.Body.Name, Published: in.Body.Published, PublicNameSearch: in.Body.PublicNameSearch})
			return &eventOutput{Body: e}, err
		}))
}
