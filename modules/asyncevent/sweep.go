package asyncevent

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SweepResult reports a sweep for stranded requests.
type SweepResult struct {
	Stranded int `json:"stranded" doc:"Requests found RECEIVED for longer than RequeueAfter"`
	Requeued int `json:"requeued" doc:"Of those, requests this sweep enqueued again"`
	// FailedEnqueue counts the requests whose enqueue failed at ingest
	// (FAILED_FINAL / FAILED_INGEST_ENQUEUE): re-queueing them is left to
	// an operator (SweepOptions.RequeueFailedEnqueue, or
	// RequeueFailed for one request).
	FailedEnqueue         int `json:"failedEnqueue" doc:"Requests FAILED_FINAL / FAILED_INGEST_ENQUEUE (their enqueue failed at ingest)"`
	FailedEnqueueRequeued int `json:"failedEnqueueRequeued" doc:"Of those, requests this sweep re-queued (only with failedEnqueue=requeue)"`
}

// DefaultSweepLookback is OperationsConfig.SweepLookback's default.
const DefaultSweepLookback = 24 * time.Hour

// SweepOptions configures SweepStranded.
type SweepOptions struct {
	// Lookback is how far back to look for requests, by their requestedAt
	// (0: OperationsConfig.SweepLookback; at most RequestTTL, a bound on
	// its cost: on DynamoDB it reads PendingShards partitions a day). The
	// store reads by UTC day, so a sweep reads from the start of the day
	// Lookback ago. A periodic sweep (every worker runs one) heals what
	// was stranded since its last run; a longer lookback is for an
	// operator's sweep after an outage longer than the default, or to
	// count and re-queue older failed enqueues. A request can be older
	// than RequestTTL (it lives until RequestTTL after its event's end):
	// sweep its event (EventID) to reach it.
	Lookback time.Duration
	// EventID, when set, sweeps that event's requests only, over the
	// whole life of the event whatever their age (Lookback does not
	// apply; on DynamoDB, Queries of the event's own pending shards for
	// each day of its life): ErrEventNotFound for an unknown event.
	EventID string
	// RequeueFailedEnqueue also re-queues every FAILED_INGEST_ENQUEUE
	// request (see RequeueFailed), an operator's decision once the queue
	// is healthy again.
	RequeueFailedEnqueue bool
}

// SweepStranded finds every request stranded in RECEIVED (see Query.GetRequest)
// and enqueues it again, at most once per RequeueAfter (a conditional
// requeuedAt); the worker takes RECEIVED requests, and a message that was
// in fact still on its way is harmless: the worker is idempotent. In the
// same pass it counts the requests whose enqueue failed at ingest and, if
// opt says so, re-queues them. It looks at requests made within
// opt.Lookback (or, with opt.EventID, one event's requests of any age),
// which the store finds without reading the whole table (on DynamoDB,
// Queries of the pending index: PendingShards per day looked back over),
// so every worker runs it periodically, and an operator
// through the admin API's POST /admin/requests/sweep. It is safe to run concurrently with itself and with reads: each
// stranded request is requeued at most once per RequeueAfter, and each
// failed one once. If re-sending a failed request fails again, the sweep
// stops re-queueing them (and keeps counting): run it again once the queue
// is healthy.
func (o *Operations) SweepStranded(ctx context.Context, opt SweepOptions) (SweepResult, error) {
	var res SweepResult
	if o.cfg.Queue == nil || o.cfg.RequeueAfter <= 0 {
		return res, fmt.Errorf("%w: requeueing is off", ErrUnavailable)
	}
	lookback := o.cfg.SweepLookback
	if opt.Lookback > 0 {
		lookback = min(opt.Lookback, RequestTTL)
	}
	now := o.now()
	before := now - o.cfg.RequeueAfter.Milliseconds()
	candidates := o.cfg.Requests.SweepCandidates(ctx, before, now-lookback.Milliseconds())
	if opt.EventID != "" {
		if !ValidID(opt.EventID) {
			return res, fmt.Errorf("%w: eventId", ErrInvalidID)
		}
		if _, err := o.cfg.Cache.get(ctx, o.cfg.Events, opt.EventID); err != nil {
			return res, err
		}
		candidates = o.cfg.Requests.PendingRequests(ctx, opt.EventID)
	}
	sendFailing := false
	for r, err := range candidates {
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if r.Status == StatusReceived && r.RequestedAt >= before {
			continue // not stranded (yet)
		}
		if r.Status == StatusFailedFinal {
			res.FailedEnqueue++
			if !opt.RequeueFailedEnqueue || sendFailing {
				continue
			}
			after, err := o.RequeueFailed(ctx, r.RequestID)
			switch {
			case err == nil && FailedEnqueue(after.Status, after.ResultCode):
				// The queue still refuses: stop re-queueing (counting on).
				// (Only the re-send fails it so: a worker that already
				// failed the re-queued request sets another code.)
				sendFailing = true
			case err == nil:
				res.FailedEnqueueRequeued++
			case errors.Is(err, ErrNotRequeueable), errors.Is(err, ErrRequestNotFound):
				// re-queued meanwhile, a lottery past its draw, or expired
			default:
				return res, err
			}
			continue
		}
		res.Stranded++
		sent, err := o.requeueStranded(ctx, r)
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if sent {
			res.Requeued++
		}
	}
	return res, nil
}

// RequeueFailed re-queues a request whose enqueue failed at ingest
// (FAILED_FINAL / FAILED_INGEST_ENQUEUE), which is an operator's
// decision: the request goes back to RECEIVED (failure fields cleared,
// requeuedAt set, logged), its message is sent, and it becomes QUEUED with
// the re-queue time as its queuedAt. If the send fails again it is
// FAILED_FINAL again.
// Any other request, or a lottery entry once the draw has started, is
// ErrNotRequeueable. Of concurrent calls that read the same failure, one
// re-queues it and the others get ErrNotRequeueable. It returns the request
// as it is afterwards: FAILED_FINAL / FAILED_INGEST_ENQUEUE again if the
// send failed again; once sent, a worker may already have moved it on
// (even to FAILED_FINAL with another result code).
func (o *Operations) RequeueFailed(ctx context.Context, requestID string) (*Request, error) {
	if !ValidID(requestID) {
		return nil, fmt.Errorf("%w: requestId", ErrInvalidID)
	}
	if o.cfg.Queue == nil {
		return nil, fmt.Errorf("%w: no queue configured", ErrUnavailable)
	}
	r, err := o.cfg.Requests.GetRequest(ctx, requestID)
	if err != nil {
		return nil, err
	}
	if !FailedEnqueue(r.Status, r.ResultCode) {
		return nil, fmt.Errorf("%w: %s is %s/%s", ErrNotRequeueable, requestID, r.Status, r.ResultCode)
	}
	// After the draw started a re-queued lottery entry could only be
	// rejected as late, though it was admitted before the cutoff: the
	// reopen is conditional on the lottery being OPEN, in its transaction,
	// so that a draw starting meanwhile wins.
	openEvent := ""
	if r.EventType == Lottery {
		openEvent = r.EventID
	}
	at := max(o.now(), r.FinishedAt+1) // its logs stay in order
	err = o.cfg.Requests.ReopenFailedEnqueue(ctx, Reopen{RequestID: requestID, EventID: r.EventID, FinishedAt: r.FinishedAt, At: at, OpenEvent: openEvent})
	var se *StateError
	var ese *EventStateError
	switch {
	case errors.As(err, &se):
		return nil, fmt.Errorf("%w: %s changed meanwhile", ErrNotRequeueable, requestID)
	case errors.As(err, &ese) && ese.Current != nil:
		return nil, fmt.Errorf("%w: the lottery %s is %s; re-queue entries before the draw", ErrNotRequeueable, r.EventID, ese.Current.Status)
	case errors.As(err, &ese):
		return nil, ese // the event does not exist: ErrEventNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	o.cfg.Log.Info("asyncevent: operator re-queued a request whose enqueue had failed", "requestId", requestID)
	shards := 0
	if r.EventType == FirstCome {
		cfg, err := o.cfg.Cache.get(ctx, o.cfg.Events, r.EventID)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		shards = cfg.IndexShards
	}
	if err := o.enq.enqueue(ctx, r, at+1, shards); err != nil {
		return nil, err
	}
	return o.cfg.Requests.GetRequest(ctx, requestID)
}

// requeueStranded enqueues r again if it has been RECEIVED for
// RequeueAfter and was not requeued within it (see SweepStranded). It reports
// whether it sent a message.
func (o *Operations) requeueStranded(ctx context.Context, r *Request) (bool, error) {
	if r.Status != StatusReceived || o.cfg.Queue == nil || o.cfg.RequeueAfter <= 0 {
		return false, nil
	}
	now := o.now()
	before := now - o.cfg.RequeueAfter.Milliseconds()
	if r.RequestedAt >= before || r.RequeuedAt >= before {
		return false, nil
	}
	err := o.cfg.Requests.MarkRequeued(ctx, r.RequestID, now, before)
	var se *StateError
	if errors.As(err, &se) {
		return false, nil // moved on, or another sweep requeued it
	}
	if err == nil {
		err = o.cfg.Queue.Send(ctx, Message{RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID, EventType: r.EventType}.Encode())
	}
	if err != nil {
		return false, err
	}
	o.cfg.Log.Warn("asyncevent: requeued a request stranded in RECEIVED", "requestId", r.RequestID, "requestedAt", r.RequestedAt)
	return true, nil
}
