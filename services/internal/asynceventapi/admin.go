package asynceventapi

import (
	"context"
	"net/http"
	"time"

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
	Capacity int64 `json:"capacity,omitempty" minimum:"1" maximum:"1000000" doc:"FIRST_COME (required there): the number of seats N"`
	OpensAt  int64 `json:"opensAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"Participations accepted from (default: now)"`
	ClosesAt int64 `json:"closesAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"FIRST_COME: participations accepted until (default and for events stored without one: 90 days after opensAt or creation, so that every event ends and every idempotency lock expires a week after)"`

	Ordering    string `json:"ordering,omitempty" enum:"arrival,delivery" doc:"FIRST_COME: how the N winners are picked. arrival (default): exactly the first N by (queuedAt, requestId), decided a few seconds after queuedAt (the allocator waits until no earlier request can still appear). delivery: as the queue delivers, at once, roughly but not exactly the first N."`
	IndexShards int    `json:"indexShards,omitempty" minimum:"1" maximum:"32" doc:"FIRST_COME: how many partitions of the event index (GSI2) the event's requests are written over (default 1). 1 keeps the default key EVENT#{eventId}, one partition per event, which takes about 1,000 participations/s on AWS. N > 1 departs from it: each request's entry goes to EVENT#{eventId}#{shard}, shard = FNV-1a(requestId) mod N, raising the event's index ceiling about N times; the admin list and the allocator read the N partitions back merged in (queuedAt, requestId) order (each admin page costs up to N queries). Fixed at creation."`
	// LOTTERY
	LotteryCutoffAt int64  `json:"lotteryCutoffAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"LOTTERY: entries accepted until"`
	Winners         int    `json:"winners,omitempty" minimum:"1" maximum:"100000" doc:"LOTTERY (required there): K, the number of winners"`
	AnnouncedAt     int64  `json:"announcedAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"LOTTERY: when results are announced (default: the cutoff)"`
	SeedCommitment  string `json:"seedCommitment,omitempty" pattern:"^[0-9a-f]{64}$" doc:"LOTTERY: hex SHA-256 of a seed you keep and reveal to the draw. Omit to let the server generate the seed and publish only its commitment until the draw."`
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

type eventRequestsInput struct {
	EventPath
	PageQuery
	Status string `query:"status" enum:"RECEIVED,QUEUED,PROCESSING,SUCCEEDED,REJECTED,FAILED_FINAL" doc:"Keep only this status (filtered on the server)"`
}

// StatsView counts an event's requests.
type StatsView struct {
	EventID           string         `json:"eventId"`
	EventType         string         `json:"eventType"`
	Total             int            `json:"total"`
	ByStatus          map[string]int `json:"byStatus"`
	ByResultCode      map[string]int `json:"byResultCode"`
	CapacityTotal     *int64         `json:"capacityTotal,omitempty" doc:"FIRST_COME only"`
	CapacityRemaining *int64         `json:"capacityRemaining,omitempty" doc:"FIRST_COME only; 0 when sold out"`
	InvariantOK       bool           `json:"invariantOk" doc:"FIRST_COME: capacityTotal − capacityRemaining == byStatus.SUCCEEDED"`
}

type statsOutput struct {
	Body StatsView
}

// LogView is one status transition.
type LogView struct {
	FromStatus string `json:"fromStatus,omitempty"`
	ToStatus   string `json:"toStatus"`
	OccurredAt int64  `json:"occurredAt"`
	Message    string `json:"message,omitempty"`
}

type logsOutput struct {
	Body struct {
		RequestID string    `json:"requestId"`
		Logs      []LogView `json:"logs"`
	}
}

type dlqInput struct {
	Max int `query:"max" minimum:"0" maximum:"50" default:"10" doc:"How many DLQ messages to show (one per request: copies collapsed, the tagged copy shown)"`
}

// DeadMessageView is a message in the DLQ.
type DeadMessageView struct {
	MessageID    string `json:"messageId"`
	ReceiveCount int    `json:"receiveCount"`
	SentAt       int64  `json:"sentAt"`
	Class        string `json:"class" doc:"Why it is here: the class the worker tagged it with (its deadClass message attribute: THROTTLED, TIMEOUT, CONFLICT, DEPENDENCY or ALLOCATING), or UNKNOWN when SQS moved it untagged (the worker died or timed out on its last receive)"`
	ErrorCode    string `json:"errorCode,omitempty" doc:"The last attempt's error code, e.g. ThrottlingException (tagged messages only)"`
	RequestID    string `json:"requestId,omitempty"`
	EventID      string `json:"eventId,omitempty"`
	UserID       string `json:"userId,omitempty"`
	Raw          string `json:"raw,omitempty" doc:"the body, when it is not a valid participation message"`
}

type dlqOutput struct {
	Body struct {
		MainDepth int               `json:"mainDepth" doc:"Messages waiting in the main queue, visible or delayed (the queue's approximate count)"`
		DeadDepth int               `json:"deadDepth" doc:"Messages waiting in the DLQ, visible or delayed (the queue's approximate count)"`
		ByClass   map[string]int    `json:"byClass" doc:"DLQ messages by class, one per request (copies collapsed), over the scanned messages: exact when complete, else a lower bound"`
		Scanned   int               `json:"scanned" doc:"DLQ messages looked at (up to 1000)"`
		Copies    int               `json:"copies" doc:"Scanned messages that were extra copies of a message (a worker's tagged send whose main-queue delete failed, then moved by SQS as well); a class redrive deletes them"`
		Complete  bool              `json:"complete" doc:"The scan saw the whole DLQ"`
		Messages  []DeadMessageView `json:"messages"`
	}
}

type redriveInput struct {
	Class string `query:"class" enum:"THROTTLED,TIMEOUT,CONFLICT,DEPENDENCY,ALLOCATING,UNKNOWN" doc:"Redrive only this class (see GET /admin/dlq byClass); without it every DLQ message moves"`
}

type redriveOutput struct {
	Body struct {
		TaskHandle string `json:"taskHandle,omitempty" doc:"Without class: names the move, which runs asynchronously"`
		Class      string `json:"class,omitempty" doc:"With class: the class redriven"`
		Moved      *int   `json:"moved,omitempty" doc:"With class: messages sent back to the main queue"`
		Dropped    *int   `json:"dropped,omitempty" doc:"With class: extra copies deleted instead of moved"`
		More       *bool  `json:"more,omitempty" doc:"With class: the DLQ had more than were looked at; call again"`
	}
}

// adminOp is an admin operation: it needs a bearer token with the admin
// role (403 without it) and may answer errs too.
func adminOp(id, method, path, summary, description string, errs ...int) huma.Operation {
	return huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary, Description: description,
		Tags: []string{"admin"}, Security: server.Bearer, Errors: append([]int{http.StatusForbidden}, errs...)}
}

func registerAdmin(api huma.API, d Deps, problem func(error) error) {
	create := adminOp("create-event", http.MethodPost, "/admin/events", "Create an event",
		"FIRST_COME needs capacity; LOTTERY needs lotteryCutoffAt and winners. The event and, for FIRST_COME, its seat count are created together: both or neither. "+
			"A FIRST_COME event always has exactly capacity winners; its ordering says which: with arrival, the first capacity requests by (queuedAt, requestId), "+
			"under any delivery order, retries or crashes (assuming every queuedAt write lands within the service's MaxLateness); "+
			"with delivery, the requests the queue happens to deliver first.",
		http.StatusConflict, http.StatusUnprocessableEntity)
	create.DefaultStatus, create.MaxBodyBytes = http.StatusCreated, eventBody
	huma.Register(api, create, server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *createEventInput) (*eventOutput, error) {
		b := in.Body
		return eventOut(d.Service.CreateEvent(ctx, asyncevent.NewEvent{
			EventID: b.EventID, EventType: asyncevent.EventType(b.EventType), Title: b.Title,
			Capacity: b.Capacity, OpensAt: b.OpensAt, ClosesAt: b.ClosesAt, Ordering: asyncevent.Ordering(b.Ordering),
			IndexShards: b.IndexShards, LotteryCutoffAt: b.LotteryCutoffAt, Winners: b.Winners, AnnouncedAt: b.AnnouncedAt, SeedCommitment: b.SeedCommitment,
		}))
	}))

	huma.Register(api, adminOp("get-event", http.MethodGet, "/admin/events/{eventId}", "Get an event", "", http.StatusNotFound),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*eventOutput, error) {
			return eventOut(d.Service.GetEvent(ctx, in.EventID))
		}))

	huma.Register(api, adminOp("close-event", http.MethodPost, "/admin/events/{eventId}/close", "Close a FIRST_COME event early",
		"OPEN → CLOSED: new participations are refused (409 event-closed) from now on in this API process and, in the others, "+
			"once their event cache expires (2 s by default); requests already accepted are still processed. Closing a closed event returns it unchanged. "+
			"A LOTTERY closes at its lotteryCutoffAt and is finished by the draw: 409 not-first-come.",
		http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*eventOutput, error) {
			return eventOut(d.Service.CloseEvent(ctx, in.EventID))
		}))

	huma.Register(api, adminOp("event-requests", http.MethodGet, "/admin/events/{eventId}/requests", "List an event's requests, newest first",
		"First the requests not queued yet (RECEIVED, and FAILED_FINAL whose enqueue failed at ingest), newest requestedAt first; then the queued ones, newest queuedAt first. "+
			"A request queued while the list is read can appear in both parts or in neither (the indexes lag writes briefly). The status filter is applied on the server as the list is read: a page is full "+
			"(limit items) unless the list ends, but filling it with a rare status reads through the requests of other statuses.",
		http.StatusBadRequest, http.StatusNotFound),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *eventRequestsInput) (*pageOutput, error) {
			page, err := d.Service.EventRequests(ctx, in.EventID, asyncevent.Status(in.Status), in.Limit, in.Cursor)
			return &pageOutput{Body: RequestPage{Items: viewsOf(page.Requests, true), Cursor: page.Cursor}}, err
		}))

	huma.Register(api, adminOp("event-stats", http.MethodGet, "/admin/events/{eventId}/stats", "Count an event's requests by status and result",
		"Counts the event's requests in every status on the server, those not queued yet included (it reads every one of them, so its cost grows with the event) and, for FIRST_COME, "+
			"checks capacityTotal − capacityRemaining == SUCCEEDED.",
		http.StatusNotFound),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *EventPath) (*statsOutput, error) {
			st, err := d.Service.EventStats(ctx, in.EventID)
			if err != nil {
				return nil, err
			}
			v := StatsView{EventID: st.EventID, EventType: string(st.EventType), Total: st.Total, ByStatus: map[string]int{}, ByResultCode: map[string]int{},
				InvariantOK: st.InvariantOK}
			if st.EventType == asyncevent.FirstCome {
				v.CapacityTotal, v.CapacityRemaining = &st.CapacityTotal, &st.CapacityRemaining
			}
			for k, n := range st.ByStatus {
				v.ByStatus[string(k)] = n
			}
			for k, n := range st.ByResultCode {
				v.ByResultCode[string(k)] = n
			}
			return &statsOutput{Body: v}, nil
		}))

	huma.Register(api, adminOp("admin-get-request", http.MethodGet, "/admin/requests/{requestId}", "Get any request", "", http.StatusNotFound),
		server.Handle(server.Admin, problem, func(ctx context.Context, p auth.Principal, in *RequestPath) (*requestOutput, error) {
			return requestOut(d.Service, true)(d.Service.GetRequest(ctx, asyncevent.Caller{UserID: p.UserID, Admin: true}, in.RequestID))
		}))

	huma.Register(api, adminOp("requeue-request", http.MethodPost, "/admin/requests/{requestId}/requeue", "Re-queue a request whose enqueue failed",
		"Only for FAILED_FINAL / FAILED_INGEST_ENQUEUE (the queue send failed at ingest; re-queueing is left to an operator). "+
			"The request goes back to RECEIVED (logged), its message is sent, and it becomes QUEUED with the re-queue time as its queuedAt. "+
			"If the send fails again it is FAILED_FINAL again. Any other request: 409 not-requeueable.",
		http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *RequestPath) (*requestOutput, error) {
			return requestOut(d.Service, true)(d.Service.RequeueFailed(ctx, in.RequestID))
		}))

	huma.Register(api, adminOp("request-logs", http.MethodGet, "/admin/requests/{requestId}/logs", "A request's status log", "", http.StatusNotFound),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *RequestPath) (*logsOutput, error) {
			logs, err := d.Service.Logs(ctx, in.RequestID)
			out := &logsOutput{}
			out.Body.RequestID = in.RequestID
			for _, l := range logs {
				out.Body.Logs = append(out.Body.Logs, LogView{FromStatus: string(l.FromStatus), ToStatus: string(l.ToStatus), OccurredAt: l.OccurredAt, Message: l.Message})
			}
			return out, err
		}))

	draw := adminOp("draw", http.MethodPost, "/admin/events/{eventId}/draw", "Run a lottery draw",
		"Allowed once lotteryCutoffAt (plus a short grace) has passed and no entry is still queued. Idempotent and resumable: "+
			"calling it again returns the same winners. Winners are the first K entries by SHA-256(seed || requestId).",
		http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity)
	draw.MaxBodyBytes = smallBody
	huma.Register(api, draw, server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *drawInput) (*drawOutput, error) {
		seed := ""
		if in.Body != nil {
			seed = in.Body.Seed
		}
		res, err := d.Service.Draw(ctx, in.EventID, seed)
		if err != nil {
			return nil, err
		}
		winners := res.Winners
		if winners == nil {
			winners = []string{}
		}
		return &drawOutput{Body: DrawView{EventID: res.EventID, Seed: res.Seed, SeedCommitment: res.SeedCommitment, Entries: res.Entries, Winners: winners, DrawnAt: res.DrawnAt}}, nil
	}))

	huma.Register(api, adminOp("dlq", http.MethodGet, "/admin/dlq", "Queue depths and DLQ messages",
		"Shows up to max DLQ messages without consuming them."),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *dlqInput) (*dlqOutput, error) {
			v, err := d.Service.DeadLetters(ctx, in.Max)
			if err != nil {
				return nil, err
			}
			out := &dlqOutput{}
			out.Body.MainDepth, out.Body.DeadDepth, out.Body.Messages = v.MainDepth, v.DeadDepth, []DeadMessageView{}
			out.Body.Scanned, out.Body.Copies, out.Body.Complete, out.Body.ByClass = v.Scanned, v.Copies, v.Complete, map[string]int{}
			for c, n := range v.ByClass {
				out.Body.ByClass[string(c)] = n
			}
			for _, m := range v.Messages {
				dm := DeadMessageView{MessageID: m.MessageID, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt, Raw: m.Raw, Class: string(m.Class), ErrorCode: m.ErrorCode}
				if m.Message != nil {
					dm.RequestID, dm.EventID, dm.UserID = m.Message.RequestID, m.Message.EventID, m.Message.UserID
				}
				out.Body.Messages = append(out.Body.Messages, dm)
			}
			return out, nil
		}))

	redrive := adminOp("dlq-redrive", http.MethodPost, "/admin/dlq/redrive", "Move DLQ messages back to the queue",
		"Without class: starts moving every DLQ message back to the main queue (SQS StartMessageMoveTask); one move runs at a time: while one runs, the answer is 409. "+
			"With class: moves that class's messages (up to 1000 looked at; more: call again) before answering, one per request (extra copies are deleted). "+
			"Workers then process them again (idempotently).",
		http.StatusConflict, http.StatusServiceUnavailable)
	redrive.DefaultStatus = http.StatusAccepted
	huma.Register(api, redrive, server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *redriveInput) (*redriveOutput, error) {
		out := &redriveOutput{}
		if in.Class != "" {
			res, err := d.Service.RedriveClass(ctx, asyncevent.DeadClass(in.Class))
			out.Body.Class, out.Body.Moved, out.Body.Dropped, out.Body.More = in.Class, &res.Moved, &res.Dropped, &res.More
			return out, err
		}
		h, err := d.Service.Redrive(ctx)
		out.Body.TaskHandle = h
		return out, err
	}))

	huma.Register(api, adminOp("sweep-stranded", http.MethodPost, "/admin/requests/sweep", "Requeue requests stranded in RECEIVED",
		"Finds requests still RECEIVED longer than the requeue delay (their ingest died, or its send and its failure mark both failed) and enqueues them again; workers then finish them. "+
			"It looks at requests made within lookbackHours, which it finds by Query in the pending index (16 Queries per UTC day looked back over; docs/capacity.md), never by scanning the table: each worker runs it every PACER_WORKER_SWEEP_EVERY (default 10 min) over the last 24 hours; call this to run it now, with a longer lookback after a longer outage, or from a scheduler if the workers' sweep is off. Each request is requeued at most once per delay, however often this runs. "+
			"The same pass counts the requests whose enqueue failed at ingest (FAILED_INGEST_ENQUEUE); with failedEnqueue=requeue it also re-queues them (see POST /admin/requests/{requestId}/requeue).",
		http.StatusServiceUnavailable),
		server.Handle(server.Admin, problem, func(ctx context.Context, _ auth.Principal, in *sweepInput) (*sweepOutput, error) {
			res, err := d.Service.SweepStranded(ctx, asyncevent.SweepOptions{RequeueFailedEnqueue: in.FailedEnqueue == "requeue",
				Lookback: time.Duration(in.LookbackHours) * time.Hour})
			return &sweepOutput{Body: res}, err
		}))
}

type sweepInput struct {
	FailedEnqueue string `query:"failedEnqueue" enum:"count,requeue" default:"count" doc:"count: only count FAILED_INGEST_ENQUEUE requests; requeue: also re-queue them"`
	LookbackHours int    `query:"lookbackHours" minimum:"0" maximum:"2160" doc:"How far back to look, by the requests' requestedAt, in hours (up to 2160, the requests' 90-day TTL; 0 or absent: the service's default, 24); read by whole UTC days. After re-queueing failed enqueues older than that, sweep with a lookback that covers them"`
}

type sweepOutput struct {
	Body asyncevent.SweepResult
}

// eventOut is an event as the answer, or err.
func eventOut(c *asyncevent.EventConfig, err error) (*eventOutput, error) {
	if err != nil {
		return nil, err
	}
	return &eventOutput{Body: eventViewOf(c)}, nil
}
