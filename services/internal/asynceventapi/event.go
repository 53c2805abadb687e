package asynceventapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// registerEvents adds the participant's view of an event, which the
// participation page shows before anyone participates.
func (h *handlers) registerEvents(api huma.API) {
	huma.Register(api, server.Op("get-event-public", http.MethodGet, "/events/{eventId}", "Get an event", tagParticipation,
		server.Describe("Any signed-in user sees an event's settings and status (OPEN, CLOSED, DRAWING, ANNOUNCED), as a participation page shows them; a lottery's seed only once its draw has started."),
		server.Fails(http.StatusNotFound)),
		server.Handle(server.Caller, h.problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*eventOutput, error) {
			return eventOut(h.admin.GetEvent(ctx, in.EventID))
		}))
}
