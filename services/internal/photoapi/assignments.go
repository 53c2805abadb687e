package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/server"
)

// AssignPath is the path of an assignment.
type AssignPath struct {
	EventPath
	PhotographerPath
}

// registerAssignments adds an organizer's operations on which
// photographers work an event.
func (h *handlers) registerAssignments(api huma.API) {
	huma.Register(api, server.Op("assign-photographer", http.MethodPut, "/events/{eventId}/photographers/{photographerId}",
		"Assign a photographer to an event", tagDirectory, refusals, server.Status(http.StatusNoContent)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *AssignPath) (*emptyOutput, error) {
			return &emptyOutput{}, h.dir.Assign(ctx, org, in.EventID, in.PhotographerID)
		}))
	huma.Register(api, server.Op("unassign-photographer", http.MethodDelete, "/events/{eventId}/photographers/{photographerId}",
		"Remove a photographer from an event (their photos stay)", tagDirectory, refusals, server.Status(http.StatusNoContent)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *AssignPath) (*emptyOutput, error) {
			return &emptyOutput{}, h.dir.Unassign(ctx, org, in.EventID, in.PhotographerID)
		}))
	huma.Register(api, server.Op("list-event-photographers", http.MethodGet, "/events/{eventId}/photographers",
		"List the photographers assigned to an event", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *EventPath) (*photographersOutput, error) {
			ps, err := h.dir.Assigned(ctx, org, in.EventID)
			return photographersOut(ps), err
		}))
}
