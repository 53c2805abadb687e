package asynceventapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// NewEventBody creates an event. Times are epoch milliseconds.
type NewEventBody struct {
	EventID   string `json:"eventId" pattern:"^[A-Za-z0-9_-]{1,64}$" maxLength:"64"`
	EventType string `json:"eventType" enum:"FIRST_COME,LOTTERY"`
	Title     string `json:"title,omitempty" maxLength:"200"`
	// FIRST_COME
	CapacityTotal int64 `json:"capacityTotal,omitempty" minimum:"1" maximum:"1000000" doc:"FIRST_COME (required there): the number of seats N (the seed's capacityTotal, as the stats view names it)"`
	OpensAt       int64 `json:"opensAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"Participations accepted from (default: now)"`
	ClosesAt      int64 `json:"closesAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"FIRST_COME: participations accepted until (default and for events stored without one: 90 days after opensAt or creation, so that every event ends and every idempotency lock expires a week after)"`

	Ordering    string `json:"ordering,omitempty" enum:"arrival,delivery" doc:"FIRST_COME: how the N winners are picked. arrival (default): exactly the first N by (queuedAt, requestId), decided a few seconds after queuedAt (the allocator waits until no earlier request can still appear). delivery: as the queue delivers, at once, roughly but not exactly the first N."`
	IndexShards int    `json:"indexShards,omitempty" minimum:"1" maximum:"32" doc:"FIRST_COME: how many partitions of the event index (GSI2) the event's requests are written over (default 1). 1 keeps the default key EVENT#{eventId}, one partition per event, which takes about 1,000 participations/s on AWS. N > 1 departs from it: each request's entry goes to EVENT#{eventId}#{shard}, shard = FNV-1a(requestId) mod N, raising the event's index ceiling about N times; the admin list and the allocator read the N partitions back merged in (queuedAt, requestId) order (each admin page costs up to N queries). Fixed at creation."`
	// LOTTERY
	LotteryCutoffAt int64  `json:"lotteryCutoffAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"LOTTERY: entries accepted until"`
	Winners         int    `json:"winners,omitempty" minimum:"1" maximum:"100000" doc:"LOTTERY (required there): K, the number of winners"`
	AnnouncedAt     int64  `json:"announcedAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"LOTTERY: when results are announced (default: the cutoff)"`
	SeedCommitment  string `json:"seedCommitment,omitempty" pattern:"^[0-9a-f]{64}$" doc:"LOTTERY: hex SHA-256 of a seed you keep and reveal to the draw. Omit to let the server generate the seed and publish only its commitment until the draw."`
	// Both types
	HumanCheck *HumanCheckBody  `json:"humanCheck,omitempty" doc:"Ask every participation for a challenge provider's token (default: none). Fixed at creation."`
	Limits     *EventLimitsBody `json:"limits,omitempty" doc:"The event's own rate limits, applied on top of the deployment's (default: the deployment's only). Fixed at creation."`
}

// EventLimitsBody is an event's own rate limits (docs/ratelimit.md, Per
// event).
type EventLimitsBody struct {
	ParticipationsPerAddress string `json:"participationsPerAddress,omitempty" pattern:"^[1-9][0-9]{0,5}/[smh]$" maxLength:"9" doc:"Participations in this event one client address may make: N/s, N/m or N/h (N up to 999999), a whole unit's worth at once. Past it: 429 rate-limited with Retry-After. Shared by the API replicas as the deployment's budgets are (PACER_RATE_REPLICAS)."`
}

// HumanCheckBody is an event's human check (docs/ratelimit.md, Human
// check).
type HumanCheckBody struct {
	Required      bool   `json:"required,omitempty" doc:"Every participation must carry humanToken, which the deployment's challenge provider (PACER_HUMAN_CHECK_URL) must pass"`
	OnUnavailable string `json:"onUnavailable,omitempty" enum:"refuse,admit" doc:"When the provider cannot be reached: refuse (default: 503 human-check-unavailable) or admit (202, the answer's humanCheck says admitted-unverified). Only with required."`
}

type createEventInput struct {
	Body NewEventBody
}

type eventOutput struct {
	Body EventView
}

// DrawBody optionally reveals the seed.
type DrawBody struct {
	Seed string `json:"seed,omitempty" pattern:"^[0-9a-f]{64}$" doc:"The seed (hex) whose SHA-256 is the event's seedCommitment; needed only if you supplied the commitment"`
}

type drawInput struct {
	EventPath
	Body *DrawBody `required:"false"`
}

// DrawView is a draw's outcome; anyone with the entry list can check it.
type DrawView struct {
	EventID        string   `json:"eventId"`
	Seed           string   `json:"seed" doc:"hex; SHA-256(seed) == seedCommitment"`
	SeedCommitment string   `json:"seedCommitment"`
	Entries        int      `json:"entries"`
	Winners        []string `json:"winners" doc:"winning requestIds in rank order: entries sorted by SHA-256(seed bytes || requestId) ascending"`
	DrawnAt        int64    `json:"drawnAt"`
}

type drawOutput struct {
	Body DrawView
}

// EventRequestsQuery is the page of an event's request list, a named
// exception to server.PageQuery: on an event whose index is sharded
// (indexShards > 1) its cursor holds a position per shard read so far, so
// it may be as long as the SDK's merged cursor (ddb.MaxMergeCursorLen,
// 16384; 4,228 characters measured over 32 shards). With server's 4096
// (2048 before) the API refused its own cursor a few pages into such an
// event. Its limits are server's.
type EventRequestsQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size, 1..100"`
	Cursor string `query:"cursor" maxLength:"16384" doc:"Opaque cursor from the previous page (it holds a position per index shard of the event, so it is longer than other cursors)"`
}

type eventRequestsInput struct {
	EventPath
	EventRequestsQuery
	Status string `query:"status" enum:"RECEIVED,QUEUED,PROCESSING,SUCCEEDED,REJECTED,FAILED_FINAL" doc:"Keep only this status (filtered on the server)"`
}

// StatsView counts an event's requests.
type StatsView struct {
	EventID           string         `json:"eventId"`
	EventType         string         `json:"eventType"`
	Total             int            `json:"total"`
	ByStatus          map[string]int `json:"byStatus"`
	ByResultCode      map[string]int `json:"byResultCode"`
	DLQCandidates     int            `json:"dlqCandidates" doc:"Requests not decided whose last recorded event is a retryable failure (lastErrorAt after every transition): their message is being delivered again, and is in the DLQ once the queue's receives are spent (a worker lost on the last receive is recorded so too, errorCode WORKER_LOST). Counted in the same pass as the rest"`
	CapacityTotal     *int64         `json:"capacityTotal,omitempty" doc:"FIRST_COME only"`
	CapacityRemaining *int64         `json:"capacityRemaining,omitempty" doc:"FIRST_COME only; 0 when sold out"`
	InvariantOK       bool           `json:"invariantOk" doc:"FIRST_COME: capacityTotal − capacityRemaining == byStatus.SUCCEEDED"`
}

type statsOutput struct {
	Body StatsView
}

// registerAdminEvents adds an admin's operations on events: create, read,
// close, list and count their requests, draw a lottery.
func (h *handlers) registerAdminEvents(api huma.API) {
	huma.Register(api, server.Op("create-event", http.MethodPost, "/admin/events", "Create an event", tagAdmin,
		server.Describe("FIRST_COME needs capacityTotal; LOTTERY needs lotteryCutoffAt and winners. The event and, for FIRST_COME, its seat count are created together: both or neither. "+
			"A FIRST_COME event always has exactly capacityTotal winners; its ordering says which: with arrival, the first capacityTotal requests by (queuedAt, requestId), "+
			"under any delivery order, retries or crashes (assuming every queuedAt write lands within the service's MaxLateness); "+
			"with delivery, the requests the queue happens to deliver first."),
		server.Status(http.StatusCreated), server.MaxBody(eventBody), server.Fails(http.StatusForbidden, http.StatusConflict, http.StatusUnprocessableEntity)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *createEventInput) (*eventOutput, error) {
			return eventOut(h.admin.CreateEvent(ctx, in.Body.event()))
		}))

	huma.Register(api, server.Op("get-event", http.MethodGet, "/admin/events/{eventId}", "Get an event", tagAdmin,
		server.Fails(http.StatusForbidden, http.StatusNotFound)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*eventOutput, error) {
			return eventOut(h.admin.GetEvent(ctx, in.EventID))
		}))

	huma.Register(api, server.Op("close-event", http.MethodPost, "/admin/events/{eventId}/close", "Close a FIRST_COME event early", tagAdmin,
		server.Describe("OPEN → CLOSED: new participations are refused (409 event-closed) from now on in this API process and, in the others, "+
			"once their event cache expires (2 s by default); requests already accepted are still processed. Closing a closed event returns it unchanged. "+
			"A LOTTERY closes at its lotteryCutoffAt and is finished by the draw: 409 not-first-come."),
		server.Fails(http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*eventOutput, error) {
			return eventOut(h.admin.CloseEvent(ctx, in.EventID))
		}))

	huma.Register(api, server.Op("event-requests", http.MethodGet, "/admin/events/{eventId}/requests",
		"List an event's requests, newest first", tagAdmin, server.Bulk(),
		server.Describe("First the requests not queued yet (RECEIVED, and FAILED_FINAL whose enqueue failed at ingest), newest requestedAt first; then the queued ones, newest queuedAt first. "+
			"A request queued while the list is read can appear in both parts or in neither (the indexes lag writes briefly). The status filter is applied on the server as the list is read: a page is full "+
			"(limit items) unless the list ends, but filling it with a rare status reads through the requests of other statuses."),
		server.Fails(http.StatusForbidden, http.StatusBadRequest, http.StatusNotFound)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *eventRequestsInput) (*pageOutput, error) {
			page, err := h.admin.EventRequests(ctx, in.EventID, asyncevent.Status(in.Status), in.Limit, in.Cursor)
			return &pageOutput{Body: RequestPage{Items: viewsOf(page.Requests, true), Cursor: page.Cursor}}, err
		}))

	huma.Register(api, server.Op("event-stats", http.MethodGet, "/admin/events/{eventId}/stats",
		"Count an event's requests by status and result", tagAdmin, server.Bulk(),
		server.Describe("Counts the event's requests in every status on the server, those not queued yet included (it reads every one of them, so its cost grows with the event; never by scanning the table), "+
			"and its dead-letter candidates (dlqCandidates) in the same pass, and, for FIRST_COME, "+
			"checks capacityTotal − capacityRemaining == SUCCEEDED."),
		server.Fails(http.StatusForbidden, http.StatusNotFound)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*statsOutput, error) {
			st, err := h.admin.EventStats(ctx, in.EventID)
			if err != nil {
				return nil, err
			}
			return &statsOutput{Body: statsViewOf(st)}, nil
		}))

	huma.Register(api, server.Op("draw", http.MethodPost, "/admin/events/{eventId}/draw", "Run a lottery draw", tagAdmin, server.Bulk(),
		server.Describe("Allowed once lotteryCutoffAt (plus a short grace) has passed and no entry is still queued. Idempotent and resumable: "+
			"calling it again returns the same winners. Winners are the first K entries by SHA-256(seed || requestId)."),
		server.MaxBody(smallBody), server.Fails(http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *drawInput) (*drawOutput, error) {
			res, err := h.admin.Draw(ctx, in.EventID, in.Body.seed())
			if err != nil {
				return nil, err
			}
			return &drawOutput{Body: drawViewOf(res)}, nil
		}))
}

// event is the event b describes.
func (b NewEventBody) event() asyncevent.NewEvent {
	return asyncevent.NewEvent{
		EventID: b.EventID, EventType: asyncevent.EventType(b.EventType), Title: b.Title,
		Capacity: b.CapacityTotal, OpensAt: b.OpensAt, ClosesAt: b.ClosesAt, Ordering: asyncevent.Ordering(b.Ordering),
		IndexShards: b.IndexShards, LotteryCutoffAt: b.LotteryCutoffAt, Winners: b.Winners, AnnouncedAt: b.AnnouncedAt, SeedCommitment: b.SeedCommitment,
		HumanCheck: b.HumanCheck.humanCheck(), Limits: b.Limits.limits(),
	}
}

// limits are the limits b asks for: none when absent.
func (b *EventLimitsBody) limits() asyncevent.EventLimits {
	if b == nil {
		return asyncevent.EventLimits{}
	}
	return asyncevent.EventLimits{ParticipationsPerAddress: asyncevent.Budget(b.ParticipationsPerAddress)}
}

// humanCheck is the human check b asks for: none when absent.
func (b *HumanCheckBody) humanCheck() asyncevent.HumanCheck {
	if b == nil {
		return asyncevent.HumanCheck{}
	}
	return asyncevent.HumanCheck{Required: b.Required, OnUnavailable: asyncevent.HumanPolicy(b.OnUnavailable)}
}

// seed is the seed b reveals: none when the body or the seed is absent.
func (b *DrawBody) seed() string {
	if b == nil {
		return ""
	}
	return b.Seed
}

// statsViewOf is an event's counts as the answer shows them.
func statsViewOf(st *asyncevent.Stats) StatsView {
	v := StatsView{EventID: st.EventID, EventType: string(st.EventType), Total: st.Total, ByStatus: map[string]int{}, ByResultCode: map[string]int{},
		DLQCandidates: st.DLQCandidates, InvariantOK: st.InvariantOK}
	if st.EventType == asyncevent.FirstCome {
		v.CapacityTotal, v.CapacityRemaining = &st.CapacityTotal, &st.CapacityRemaining
	}
	for k, n := range st.ByStatus {
		v.ByStatus[string(k)] = n
	}
	for k, n := range st.ByResultCode {
		v.ByResultCode[string(k)] = n
	}
	return v
}

// drawViewOf is a draw's outcome as the answer shows it: winners is a
// list, empty when no one won.
func drawViewOf(res *asyncevent.DrawResult) DrawView {
	winners := res.Winners
	if winners == nil {
		winners = []string{}
	}
	return DrawView{EventID: res.EventID, Seed: res.Seed, SeedCommitment: res.SeedCommitment, Entries: res.Entries, Winners: winners, DrawnAt: res.DrawnAt}
}
