package asyncevent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// enqueuer sends a request's message and records it queued: ingest's
// last step (Ingest.Participate) and an operator's re-queue's
// (Operations.RequeueFailed).
type enqueuer struct {
	queue        Queue
	requests     Transitioner
	writeTimeout time.Duration
	now          func() time.Time
	log          *slog.Logger
	// unsure counts queuedAt writes of unknown outcome (see
	// Ingest.QueuedAtUnsure).
	unsure atomic.Int64
}

// newEnqueuer returns the enqueuer of a role that sends participation
// messages (Ingest, and Operations for its re-queues).
func newEnqueuer(q Queue, requests Transitioner, l Lateness, now func() time.Time, log *slog.Logger) *enqueuer {
	return &enqueuer{queue: q, requests: requests, writeTimeout: l.WriteTimeout, now: now, log: log}
}

// enqueue sends r's message and moves r RECEIVED → QUEUED with queuedAt, or,
// if the send fails, RECEIVED → FAILED_FINAL / FAILED_INGEST_ENQUEUE,
// listed among its user's participations at its requestedAt. Its
// transitions are timed no earlier than floor (epoch millis). It fails
// (ErrUnavailable) if the send was given up when ctx ended (at the
// caller's deadline: the message may still land), or failed and the
// request could not be marked failed either: then the request stays
// RECEIVED, for a worker if the message landed, else for the sweep.
// shards is the event's IndexShards.
func (e *enqueuer) enqueue(ctx context.Context, r *Request, floor int64, shards int) error {
	msg := Message{RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID, EventType: r.EventType}
	if err := e.queue.Send(ctx, msg.Encode()); err != nil {
		if ctx.Err() != nil {
			// Given up, not refused: the queue may have taken the message
			// (a stalled server processes it once it resumes). Marking the
			// request failed would make a worker drop a message that
			// landed; RECEIVED lets a worker take it from there, and the
			// sweep enqueues it after OperationsConfig.RequeueAfter if no
			// message did. The client's retry gets this id as a duplicate.
			e.log.Warn("asyncevent: enqueue given up; the request stays RECEIVED", "requestId", r.RequestID, "err", err)
			return fmt.Errorf("%w: enqueue given up: %v", ErrUnavailable, err)
		}
		// Refused: marked failed even if the client goes away meanwhile,
		// but no later than ctx's deadline.
		mctx, cancel := withoutCancel(ctx)
		defer cancel()
		at := max(e.now().UnixMilli(), floor)
		ferr := e.requests.Transition(mctx, &Transition{
			RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID,
			From: []Status{StatusReceived}, To: StatusFailedFinal, At: at, ListedAt: r.RequestedAt,
			FinishedAt: at, UIResult: ResultFailed, ResultCode: CodeFailedIngestEnqueue,
			FailureClass: Retryable, ErrorCode: ErrorIngestEnqueue,
			ErrorMessage: truncate("enqueue failed: "+err.Error(), MaxErrorMessage),
			Message:      "enqueue failed",
		})
		if ferr != nil {
			var se *StateError
			if !errors.As(ferr, &se) {
				// The request stays RECEIVED with no message. The client's
				// retry gets this id as a duplicate, and the sweep enqueues
				// it after OperationsConfig.RequeueAfter (see
				// Operations.SweepStranded).
				e.log.Error("asyncevent: enqueue failed and the request could not be marked failed", "requestId", r.RequestID, "send", err, "mark", ferr)
				return fmt.Errorf("%w: enqueue failed: %v", ErrUnavailable, err)
			}
		}
		e.log.Warn("asyncevent: enqueue failed", "requestId", r.RequestID, "err", err)
		return nil
	}
	// queuedAt is stamped now and must land within WriteTimeout: the
	// arrival allocator relies on it (Lateness.Max). The write's bound is
	// WriteTimeout or what is left of ctx's deadline, whichever ends
	// first; a write given up at either is counted (unsure, below).
	at := max(e.now().UnixMilli(), floor)
	wctx, cancel := context.WithTimeout(ctx, e.writeTimeout)
	err := e.requests.Transition(wctx, &Transition{
		RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID,
		From: []Status{StatusReceived}, To: StatusQueued, At: at, QueuedAt: at, IndexShards: shards,
	})
	cancel()
	var se *StateError
	switch {
	case err == nil:
	case errors.As(err, &se):
		// A worker got the message first and took the request from
		// RECEIVED, recording queuedAt itself: nothing left to do.
	default:
		// The message is on the queue: a worker will process the request
		// and record queuedAt from the message. The request is accepted.
		// The write may still land, late (QueuedAtUnsure).
		e.unsure.Add(1)
		e.log.Warn("asyncevent: could not mark request queued; the worker will", "requestId", r.RequestID, "err", err)
	}
	return nil
}

// withoutCancel is ctx without its cancellation, so that a client going
// away does not cut a write short, but with its deadline, if it has one.
func withoutCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	c := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(c, d)
	}
	return c, func() {}
}
