package asynceventapi

import (
	"cmp"
	"log/slog"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Deps are what the routes need: the API process's roles. Register reads
// them only when a request arrives, so the spec can be generated with a
// zero Deps.
type Deps struct {
	Ingest     *asyncevent.Ingest     // participations
	Query      *asyncevent.Query      // a user's requests, and a request for an admin
	Admin      *asyncevent.Admin      // events, draws, an event's requests, logs, the DLQ
	Operations *asyncevent.Operations // the sweep and re-queues
	// TagKey keys the polls' ETags (pollTags): the cursor key, so that
	// every API process issues the same tags (nil: a random key).
	TagKey []byte
	// Limits are the participation and poll rate limits (none when nil).
	Limits server.Limits
	// Bounds are the operations' deadlines and the in-flight bound (the
	// zero Bounds: the defaults).
	Bounds server.Bounds
	// Ready are the readiness report's checks beside the key set's: the
	// human-check provider's (HumanCheckReady).
	Ready []server.Checker
	Log   *slog.Logger // default slog.Default()
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

type requestOutput struct {
	// RetryAfter, on a request that cannot change before then, is when a
	// poll is worth making again (asyncevent.Query.PollAfter).
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

// Tags group the operations in the spec.
const (
	tagParticipation = "Participation"
	tagAdmin         = server.TagAdmin
)

// handlers holds what every route needs: the roles it calls. It reads
// them only when a request arrives, so the spec can be generated with a
// zero Deps.
type handlers struct {
	ingest  *asyncevent.Ingest
	query   *asyncevent.Query
	admin   *asyncevent.Admin
	ops     *asyncevent.Operations
	tags    pollTags
	log     *slog.Logger
	problem func(error) error // the domain's errors as problems (errors.go)
}

// Register adds the AsyncEvent operations to api. Authentication is the
// server.Authenticate middleware's job; operations with Security need a
// verified bearer token (or, in dev mode only, the dev header).
func Register(api huma.API, d Deps) {
	h := &handlers{ingest: d.Ingest, query: d.Query, admin: d.Admin, ops: d.Operations, tags: newPollTags(d.TagKey), log: cmp.Or(d.Log, slog.Default()), problem: problems(d.Log).Problem}
	server.ClientIP(api, d.Limits.Proxies) // for the rate limits and the human check: found once
	server.RateLimit(api, d.Limits, map[string]string{"participate": "participate", "get-request": "poll"})
	h.registerParticipation(api)
	h.registerEvents(api)
	h.registerAdminEvents(api)
	h.registerAdminRequests(api)
	h.registerDLQ(api)
	server.DocumentRetryAfter(api)
}

// requestOut returns a function that answers a request as admin (or its
// owner) sees it, with q's poll hint, or err.
func requestOut(q *asyncevent.Query, admin bool) func(*asyncevent.Request, error) (*requestOutput, error) {
	return func(r *asyncevent.Request, err error) (*requestOutput, error) {
		if err != nil {
			return nil, err
		}
		return &requestOutput{Body: viewOf(r, admin), RetryAfter: asyncevent.RetryAfter(q.PollAfter(r))}, nil
	}
}

// eventOut is an event as the answer, or err.
func eventOut(c *asyncevent.EventConfig, err error) (*eventOutput, error) {
	if err != nil {
		return nil, err
	}
	return &eventOutput{Body: eventViewOf(c)}, nil
}
