package asynceventapi

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Deps are what the routes need. Register reads Service only when a
// request arrives, so the spec can be generated with a zero Deps.
type Deps struct {
	Service *asyncevent.Service
	Log     *slog.Logger // default slog.Default()
}

// Body size limits.
const (
	smallBody = 1 << 10 // participation, draw
	eventBody = 4 << 10 // event creation
)

// EventPath is the eventId path parameter: 1..64 of [A-Za-z0-9_-]; the
// validation error names the field. (Parameter structs are exported so
// that Huma can fill them when embedded.)
type EventPath struct {
	EventID string `path:"eventId" pattern:"^[A-Za-z0-9_-]{1,64}$" maxLength:"64" doc:"Event id: 1 to 64 letters, digits, '_' or '-'"`
}

// RequestPath is the requestId path parameter.
type RequestPath struct {
	RequestID string `path:"requestId" pattern:"^[A-Za-z0-9_-]{1,64}$" maxLength:"64" doc:"Request id"`
}

// PageQuery is the limit and cursor of a paginated list.
type PageQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size, 1..100"`
	Cursor string `query:"cursor" maxLength:"2048" doc:"Opaque cursor from the previous page"`
}

// ParticipationBody is the optional body of a participation. It has no
// fields: the user is the token's subject, never a body field, and any
// field (such as userId) is rejected.
type ParticipationBody struct{}

type participateInput struct {
	EventPath
	Body *ParticipationBody `required:"false"`
}

// Accepted is the answer to a participation.
type Accepted struct {
	RequestID   string `json:"requestId" doc:"Poll GET /requests/{requestId} for the outcome"`
	IsDuplicate bool   `json:"isDuplicate" doc:"true when this user already participated; requestId is the original one"`
}

type acceptedOutput struct {
	Body Accepted
}

type requestOutput struct {
	// RetryAfter, on a request that cannot change before then, is when a
	// poll is worth making again (asyncevent.Service.PollAfter).
	RetryAfter string `header:"Retry-After" doc:"Whole seconds before a new read can show a change (an arrival candidate waits for the allocator's watermark); absent when unknown or decided"`
	Body       RequestView
}

// RequestPage is a page of requests.
type RequestPage struct {
	Items  []RequestView `json:"items"`
	Cursor string        `json:"cursor,omitempty" doc:"Pass as cursor for the next page; absent on the last page"`
}

type pageOutput struct {
	Body RequestPage
}

// Register adds the AsyncEvent operations to api. Authentication is the
// server.Authenticate middleware's job; operations with Security need a
// verified bearer token (or, in dev mode only, the dev header).
func Register(api huma.API, d Deps) {
	problem := problems(d.Log).Problem
	huma.Register(api, huma.Operation{
		OperationID: "participate", Method: http.MethodPost, Path: "/events/{eventId}/participations",
		Summary: "Participate in an event",
		Description: "Accepts the caller's participation at once and answers 202 with a requestId; a queue and workers decide the outcome. " +
			"A repeated participation by the same user answers 202 with the original requestId and isDuplicate=true. " +
			"The user is the token's subject; the body, if any, must be empty. " +
			"Fairness (FIRST_COME): the request's position is (queuedAt, requestId); on an event with ordering arrival the seats go to exactly the first N positions, " +
			"and the request shows uiPhase ALLOCATING until the in-order allocation decides it; with ordering delivery they go in the order the queue delivers.",
		Tags: []string{"participation"}, Security: server.Bearer, DefaultStatus: http.StatusAccepted, MaxBodyBytes: smallBody,
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
	}, server.Handle(server.Caller, problem, func(ctx context.Context, p auth.Principal, in *participateInput) (*acceptedOutput, error) {
		res, err := d.Service.Participate(ctx, in.EventID, p.UserID)
		return &acceptedOutput{Body: Accepted{RequestID: res.RequestID, IsDuplicate: res.IsDuplicate}}, err
	}))

	huma.Register(api, huma.Operation{
		OperationID: "get-request", Method: http.MethodGet, Path: "/requests/{requestId}",
		Summary: "Get a participation request",
		Description: "The owner (or an admin) sees the request's status, UI phase and result, timeline, and delays. To anyone else the request does not exist (404). " +
			"While a new read cannot show a change (an arrival candidate is decided no sooner than MaxLateness after its queuedAt), the answer carries Retry-After: poll again after it, not sooner.",
		Tags: []string{"participation"}, Security: server.Bearer, Errors: []int{http.StatusNotFound},
	}, server.Handle(server.Caller, problem, func(ctx context.Context, p auth.Principal, in *RequestPath) (*requestOutput, error) {
		return requestOut(d.Service, false)(d.Service.GetRequest(ctx, asyncevent.Caller{UserID: p.UserID, Admin: p.IsAdmin()}, in.RequestID))
	}))

	huma.Register(api, huma.Operation{
		OperationID: "my-participations", Method: http.MethodGet, Path: "/me/participations",
		Summary:     "List my participations, newest first",
		Description: "Newest queuedAt first; requests appear once queued. A page costs one read.",
		Tags:        []string{"participation"}, Security: server.Bearer, Errors: []int{http.StatusBadRequest},
	}, server.Handle(server.Caller, problem, func(ctx context.Context, p auth.Principal, in *PageQuery) (*pageOutput, error) {
		page, err := d.Service.MyRequests(ctx, p.UserID, in.Limit, in.Cursor)
		return &pageOutput{Body: RequestPage{Items: viewsOf(page.Requests, false), Cursor: page.Cursor}}, err
	}))

	registerEvent(api, d, problem)
	registerAdmin(api, d, problem)
}

// requestOut returns a function that answers a request as admin (or its
// owner) sees it, with svc's poll hint, or err.
func requestOut(svc *asyncevent.Service, admin bool) func(*asyncevent.Request, error) (*requestOutput, error) {
	return func(r *asyncevent.Request, err error) (*requestOutput, error) {
		if err != nil {
			return nil, err
		}
		return &requestOutput{Body: viewOf(r, admin), RetryAfter: asyncevent.RetryAfter(svc.PollAfter(r))}, nil
	}
}
