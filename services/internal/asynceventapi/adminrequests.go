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

type sweepInput struct {
	FailedEnqueue string `query:"failedEnqueue" enum:"count,requeue" default:"count" doc:"count: only count FAILED_INGEST_ENQUEUE requests; requeue: also re-queue them"`
	LookbackHours int    `query:"lookbackHours" minimum:"0" maximum:"2160" doc:"How far back to look, by the requests' requestedAt, in hours (up to 2160, 90 days: a bound on the sweep's cost; 0 or absent: the service's default, 24); read by whole UTC days. After re-queueing failed enqueues older than that, sweep with a lookback that covers them, or by event (eventId)"`
	EventID       string `query:"eventId" pattern:"^[A-Za-z0-9_-]{1,64}$" maxLength:"64" doc:"Sweep this event's requests only, over its whole life whatever their age (lookbackHours does not apply): a request lives until 90 days after its event's end, so an event lasting longer holds requests older than any lookback. 404 for an unknown event"`
}

type sweepOutput struct {
	Body asyncevent.SweepResult
}

// registerAdminRequests adds an admin's operations on requests: read any
// request and its log, re-queue one whose enqueue failed, and sweep those
// stranded in RECEIVED.
func (h *handlers) registerAdminRequests(api huma.API) {
	huma.Register(api, server.Op("admin-get-request", http.MethodGet, "/admin/requests/{requestId}", "Get any request", tagAdmin,
		server.Fails(http.StatusForbidden, http.StatusNotFound)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, p auth.Principal, in *RequestPath) (*requestOutput, error) {
			return requestOut(h.query, true)(h.query.GetRequest(ctx, asyncevent.Caller{UserID: p.UserID, Admin: true}, in.RequestID))
		}))

	huma.Register(api, server.Op("requeue-request", http.MethodPost, "/admin/requests/{requestId}/requeue",
		"Re-queue a request whose enqueue failed", tagAdmin,
		server.Describe("Only for FAILED_FINAL / FAILED_INGEST_ENQUEUE (the queue send failed at ingest; re-queueing is left to an operator). "+
			"The request goes back to RECEIVED (logged), its message is sent, and it becomes QUEUED with the re-queue time as its queuedAt. "+
			"If the send fails again it is FAILED_FINAL again. Any other request: 409 not-requeueable."),
		server.Fails(http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *RequestPath) (*requestOutput, error) {
			return requestOut(h.query, true)(h.ops.RequeueFailed(ctx, in.RequestID))
		}))

	huma.Register(api, server.Op("request-logs", http.MethodGet, "/admin/requests/{requestId}/logs", "A request's status log", tagAdmin,
		server.Fails(http.StatusForbidden, http.StatusNotFound)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *RequestPath) (*logsOutput, error) {
			logs, err := h.admin.Logs(ctx, in.RequestID)
			out := &logsOutput{}
			out.Body.RequestID = in.RequestID
			for _, l := range logs {
				out.Body.Logs = append(out.Body.Logs, LogView{FromStatus: string(l.FromStatus), ToStatus: string(l.ToStatus), OccurredAt: l.OccurredAt, Message: l.Message})
			}
			return out, err
		}))

	huma.Register(api, server.Op("sweep-stranded", http.MethodPost, "/admin/requests/sweep", "Requeue requests stranded in RECEIVED", tagAdmin, server.Bulk(),
		server.Describe("Finds requests still RECEIVED longer than the requeue delay (their ingest died, or its send and its failure mark both failed) and enqueues them again; workers then finish them. "+
			"It looks at requests made within lookbackHours (or, with eventId, at one event's requests of any age), which it finds by Query in the pending index (16 Queries per UTC day looked back over; with eventId, the event's 8 or 16 per day of its life; docs/capacity.md), never by scanning the table: each worker runs it every PACER_WORKER_SWEEP_EVERY (default 10 min) over the last 24 hours; call this to run it now, with a longer lookback after a longer outage, or from a scheduler if the workers' sweep is off. Each request is requeued at most once per delay, however often this runs. "+
			"The same pass counts the requests whose enqueue failed at ingest (FAILED_INGEST_ENQUEUE); with failedEnqueue=requeue it also re-queues them (see POST /admin/requests/{requestId}/requeue)."),
		server.Fails(http.StatusForbidden, http.StatusNotFound, http.StatusServiceUnavailable)),
		server.Handle(server.Admin, h.problem, func(ctx context.Context, _ auth.Principal, in *sweepInput) (*sweepOutput, error) {
			res, err := h.ops.SweepStranded(ctx, asyncevent.SweepOptions{RequeueFailedEnqueue: in.FailedEnqueue == "requeue",
				Lookback: time.Duration(in.LookbackHours) * time.Hour, EventID: in.EventID})
			return &sweepOutput{Body: res}, err
		}))
}
