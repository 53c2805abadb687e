package asynceventapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// registerEvent adds the participant's view of an event, which the
// participation page shows before anyone participates.
func registerEvent(api huma.API, d Deps, problem func(error) error) {
	huma.Register(api, huma.Operation{
		OperationID: "get-event-public", Method: http.MethodGet, Path: "/events/{eventId}",
		Summary:     "Get an event",
		Description: "Any signed-in user sees an event's settings and status (OPEN, CLOSED, DRAWING, ANNOUNCED), as a participation page shows them; a lottery's seed only once its draw has started.",
		Tags:        []string{"participation"}, Security: server.Bearer, Errors: []int{http.StatusNotFound},
	}, server.Handle(server.Caller, problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*eventOutput, error) {
		return eventOut(d.Service.GetEvent(ctx, in.EventID))
	}))
}
