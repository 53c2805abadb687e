package asynceventapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
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
	ClosesAt int64 `json:"closesAt,omitempty" minimum:"0" maximum:"253402300799999" doc:"FIRST_COME: participations accepted until"`
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

// StatsView counts an event's queued requests.
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
	Max int `query:"max" minimum:"0" maximum:"50" default:"10" doc:"How many DLQ messages to show"`
}

// DeadMessageView is a message in the DLQ.
type DeadMessageView struct {
	MessageID    string `json:"messageId"`
	ReceiveCount int    `json:"receiveCount"`
	SentAt       int64  `json:"sentAt"`
	RequestID    string `json:"requestId,omitempty"`
	EventID      string `json:"eventId,omitempty"`
	UserID       string `json:"userId,omitempty"`
	Raw          string `json:"raw,omitempty" doc:"the body, when it is not a valid participation message"`
}

type dlqOutput struct {
	Body struct {
		MainDepth int               `json:"mainDepth" doc:"Messages waiting in the main queue (ApproximateNumberOfMessages + ApproximateNumberOfMessagesDelayed)"`
		DeadDepth int               `json:"deadDepth" doc:"Messages waiting in the DLQ (ApproximateNumberOfMessages + ApproximateNumberOfMessagesDelayed)"`
		Messages  []DeadMessageView `json:"messages"`
	}
}

type redriveOutput struct {
	Body struct {
		TaskHandle string `json:"taskHandle" doc:"SQS message move task handle; the move runs asynchronously"`
	}
}

func registerAdmin(api huma.API, d *Deps) {
	tags := []string{"admin"}
	huma.Register(api, huma.Operation{
		OperationID: "create-event", Method: http.MethodPost, Path: "/admin/events", Summary: "Create an event",
		Description: "FIRST_COME needs capacity; LOTTERY needs lotteryCutoffAt and winners. The EventConfig (and the EventCapacity) are written atomically.",
		Tags:        tags, Security: server.Bearer, DefaultStatus: http.StatusCreated, MaxBodyBytes: eventBody,
		Errors: []int{http.StatusForbidden, http.StatusConflict, http.StatusUnprocessableEntity},
	}, func(ctx context.Context, in *createEventInput) (*eventOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		b := in.Body
		cfg, err := d.Service.CreateEvent(ctx, asyncevent.NewEvent{
			EventID: b.EventID, EventType: asyncevent.EventType(b.EventType), Title: b.Title,
			Capacity: b.Capacity, OpensAt: b.OpensAt, ClosesAt: b.ClosesAt,
			LotteryCutoffAt: b.LotteryCutoffAt, Winners: b.Winners, AnnouncedAt: b.AnnouncedAt, SeedCommitment: b.SeedCommitment,
		})
		if err != nil {
			return nil, problem(d.log(), err)
		}
		return &eventOutput{Body: eventViewOf(cfg)}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "get-event", Method: http.MethodGet, Path: "/admin/events/{eventId}", Summary: "Get an event",
		Tags: tags, Security: server.Bearer, Errors: []int{http.StatusForbidden, http.StatusNotFound},
	}, func(ctx context.Context, in *EventPath) (*eventOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		cfg, err := d.Service.GetEvent(ctx, in.EventID)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		return &eventOutput{Body: eventViewOf(cfg)}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "close-event", Method: http.MethodPost, Path: "/admin/events/{eventId}/close", Summary: "Close a FIRST_COME event early",
		Description: "OPEN → CLOSED: new participations are refused (409 event-closed) from now on in this API process and, in the others, " +
			"once their event cache expires (2 s by default); requests already accepted are still processed. Closing a closed event returns it unchanged. " +
			"A LOTTERY closes at its lotteryCutoffAt and is finished by the draw: 409 not-first-come.",
		Tags: tags, Security: server.Bearer,
		Errors: []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
	}, func(ctx context.Context, in *EventPath) (*eventOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		cfg, err := d.Service.CloseEvent(ctx, in.EventID)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		return &eventOutput{Body: eventViewOf(cfg)}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "event-requests", Method: http.MethodGet, Path: "/admin/events/{eventId}/requests",
		Summary:     "List an event's requests, newest first",
		Description: "From GSI2 (newest queuedAt first); the status filter is applied on the server.",
		Tags:        tags, Security: server.Bearer, Errors: []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound},
	}, func(ctx context.Context, in *eventRequestsInput) (*pageOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		page, err := d.Service.EventRequests(ctx, in.EventID, asyncevent.Status(in.Status), in.Limit, in.Cursor)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		return &pageOutput{Body: RequestPage{Items: viewsOf(page.Requests, true), Cursor: page.Cursor}}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "event-stats", Method: http.MethodGet, Path: "/admin/events/{eventId}/stats",
		Summary:     "Count an event's requests by status and result",
		Description: "Counts the queued requests (GSI2) on the server and, for FIRST_COME, checks capacityTotal − capacityRemaining == SUCCEEDED.",
		Tags:        tags, Security: server.Bearer, Errors: []int{http.StatusForbidden, http.StatusNotFound},
	}, func(ctx context.Context, in *EventPath) (*statsOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		st, err := d.Service.EventStats(ctx, in.EventID)
		if err != nil {
			return nil, problem(d.log(), err)
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
	})

	huma.Register(api, huma.Operation{
		OperationID: "admin-get-request", Method: http.MethodGet, Path: "/admin/requests/{requestId}", Summary: "Get any request",
		Tags: tags, Security: server.Bearer, Errors: []int{http.StatusForbidden, http.StatusNotFound},
	}, func(ctx context.Context, in *RequestPath) (*requestOutput, error) {
		p, err := admin(ctx)
		if err != nil {
			return nil, err
		}
		r, err := d.Service.GetRequest(ctx, asyncevent.Caller{UserID: p.UserID, Admin: true}, in.RequestID)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		return &requestOutput{Body: viewOf(r, true)}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "requeue-request", Method: http.MethodPost, Path: "/admin/requests/{requestId}/requeue",
		Summary: "Re-queue a request whose enqueue failed",
		Description: "Only for FAILED_FINAL / FAILED_INGEST_ENQUEUE (the SQS send failed at ingest; the seeds leave re-queueing to an operator). " +
			"The request goes back to RECEIVED (logged), its message is sent, and it becomes QUEUED with the re-queue time as its queuedAt. " +
			"If the send fails again it is FAILED_FINAL again. Any other request: 409 not-requeueable.",
		Tags: tags, Security: server.Bearer,
		Errors: []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable},
	}, func(ctx context.Context, in *RequestPath) (*requestOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		r, err := d.Service.RequeueFailed(ctx, in.RequestID)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		return &requestOutput{Body: viewOf(r, true)}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "request-logs", Method: http.MethodGet, Path: "/admin/requests/{requestId}/logs", Summary: "A request's status log",
		Tags: tags, Security: server.Bearer, Errors: []int{http.StatusForbidden, http.StatusNotFound},
	}, func(ctx context.Context, in *RequestPath) (*logsOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		logs, err := d.Service.Logs(ctx, in.RequestID)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		out := &logsOutput{}
		out.Body.RequestID = in.RequestID
		for _, l := range logs {
			out.Body.Logs = append(out.Body.Logs, LogView{FromStatus: string(l.FromStatus), ToStatus: string(l.ToStatus), OccurredAt: l.OccurredAt, Message: l.Message})
		}
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "draw", Method: http.MethodPost, Path: "/admin/events/{eventId}/draw", Summary: "Run a lottery draw",
		Description: "Allowed once lotteryCutoffAt (plus a short grace) has passed and no entry is still queued. Idempotent and resumable: " +
			"calling it again returns the same winners. Winners are the first K entries by SHA-256(seed || requestId).",
		Tags: tags, Security: server.Bearer, MaxBodyBytes: smallBody,
		Errors: []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
	}, func(ctx context.Context, in *drawInput) (*drawOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		seed := ""
		if in.Body != nil {
			seed = in.Body.Seed
		}
		res, err := d.Service.Draw(ctx, in.EventID, seed)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		winners := res.Winners
		if winners == nil {
			winners = []string{}
		}
		return &drawOutput{Body: DrawView{EventID: res.EventID, Seed: res.Seed, SeedCommitment: res.SeedCommitment, Entries: res.Entries, Winners: winners, DrawnAt: res.DrawnAt}}, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "dlq", Method: http.MethodGet, Path: "/admin/dlq", Summary: "Queue depths and DLQ messages",
		Description: "Shows up to max DLQ messages without consuming them.",
		Tags:        tags, Security: server.Bearer, Errors: []int{http.StatusForbidden},
	}, func(ctx context.Context, in *dlqInput) (*dlqOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		v, err := d.Service.DeadLetters(ctx, in.Max)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		out := &dlqOutput{}
		out.Body.MainDepth, out.Body.DeadDepth, out.Body.Messages = v.MainDepth, v.DeadDepth, []DeadMessageView{}
		for _, m := range v.Messages {
			dm := DeadMessageView{MessageID: m.MessageID, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt, Raw: m.Raw}
			if m.Message != nil {
				dm.RequestID, dm.EventID, dm.UserID = m.Message.RequestID, m.Message.EventID, m.Message.UserID
			}
			out.Body.Messages = append(out.Body.Messages, dm)
		}
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "dlq-redrive", Method: http.MethodPost, Path: "/admin/dlq/redrive", Summary: "Move DLQ messages back to the queue",
		Description: "Starts an SQS message move task from the DLQ to the main queue; workers then process the messages again (idempotently). SQS runs one move at a time: while one runs, the answer is 409.",
		Tags:        tags, Security: server.Bearer, DefaultStatus: http.StatusAccepted, Errors: []int{http.StatusForbidden, http.StatusConflict, http.StatusServiceUnavailable},
	}, func(ctx context.Context, _ *struct{}) (*redriveOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		h, err := d.Service.Redrive(ctx)
		if err != nil {
			return nil, problem(d.log(), err)
		}
		out := &redriveOutput{}
		out.Body.TaskHandle = h
		return out, nil
	})

	huma.Register(api, huma.Operation{
		OperationID: "sweep-stranded", Method: http.MethodPost, Path: "/admin/requests/sweep", Summary: "Requeue requests stranded in RECEIVED",
		Description: "Finds requests still RECEIVED longer than the requeue delay (their ingest died, or its send and its failure mark both failed) and enqueues them again; workers then finish them. " +
			"Scans the table, so it is a periodic job, not a per-request call: each worker runs it every PACER_WORKER_SWEEP_EVERY (default 10 min); call this to run it now, or from a scheduler if the workers' sweep is off. Each request is requeued at most once per delay, however often this runs. " +
			"The same pass counts the requests whose enqueue failed at ingest (FAILED_INGEST_ENQUEUE); with failedEnqueue=requeue it also re-queues them (see POST /admin/requests/{requestId}/requeue).",
		Tags: tags, Security: server.Bearer, Errors: []int{http.StatusForbidden, http.StatusServiceUnavailable},
	}, func(ctx context.Context, in *sweepInput) (*sweepOutput, error) {
		if _, err := admin(ctx); err != nil {
			return nil, err
		}
		res, err := d.Service.SweepStranded(ctx, asyncevent.SweepOptions{RequeueFailedEnqueue: in.FailedEnqueue == "requeue"})
		if err != nil {
			return nil, problem(d.log(), err)
		}
		return &sweepOutput{Body: res}, nil
	})
}

type sweepInput struct {
	FailedEnqueue string `query:"failedEnqueue" enum:"count,requeue" default:"count" doc:"count: only count FAILED_INGEST_ENQUEUE requests; requeue: also re-queue them"`
}

type sweepOutput struct {
	Body asyncevent.SweepResult
}
