package asyncevent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Worker decides delivered participation messages (Process, and Lost for
// a message past its last processing receive): a FIRST_COME request of an
// event ordered by delivery takes its seat or is rejected, a lottery
// entry is collected for the draw, and a request of an arrival-ordered
// event becomes a candidate for the process's Allocator. A worker process
// builds one (with its Allocator); the API process builds none. It is
// safe for concurrent use.
type Worker struct {
	cfg WorkerConfig

	mu sync.Mutex
	// soldOut holds the events this worker saw run out of seats: it then
	// rejects with a sold-out condition instead of trying the decrement.
	soldOut map[string]bool
	// unsure counts queuedAt writes of unknown outcome (see
	// QueuedAtUnsure).
	unsure atomic.Int64
}

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	// Requests moves requests along their lifecycle, reads them and
	// records failed attempts.
	Requests WorkerStore
	// Events reads the event of a message (through Cache).
	Events EventReader
	// Queue continues an arrival candidate's message while it waits for
	// the allocator (see CandidateWaits). Nil: a waiting candidate's
	// message stays on the queue, and its receives count.
	Queue DelayQueue
	// Allocator is this process's arrival allocator: Process tells it of
	// each candidate and asks it when the candidate is due. Required (the
	// worker process runs its Run loop).
	Allocator *Allocator
	// Line, if set, is this process's line keeper: Process tells it of
	// each message's event (it runs its Run loop).
	Line *LineKeeper
	// Cache is the process's event cache (see EventCache). Nil: a cache of
	// this Worker's own, with DefaultEventCacheTTL.
	Cache *EventCache

	// CandidateWaits is how many times an arrival candidate's message is
	// continued (acked and sent again, delayed, with a fresh receive
	// count) while its request waits for the allocator (default 10;
	// negative: never, each wait is a receive). Waiting is not failing: a
	// long queue must not push candidates into the DLQ, which holds only
	// messages that failed after retries. After these waits (about 7.5
	// minutes with the defaults) the message stays on the queue between
	// deliveries and its receives count toward maxReceiveCount: a request
	// the allocator has not decided by then reaches the DLQ (class
	// ALLOCATING).
	CandidateWaits int
	// WorkerID names this worker process: its transitions record it on
	// the request (workerId), and the analytics events carry it. Empty
	// records nothing.
	WorkerID string
	// Lateness bounds the queuedAt a worker stamps on a request still
	// RECEIVED (its WriteTimeout); the same in every process (see
	// Lateness).
	Lateness Lateness

	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
}

// withDefaults returns c with every unset field at its default.
func (c WorkerConfig) withDefaults() WorkerConfig {
	if c.Cache == nil {
		c.Cache = NewEventCache(0)
	}
	if c.CandidateWaits == 0 {
		c.CandidateWaits = 10
	}
	c.Lateness = c.Lateness.withDefaults()
	c.Now, c.Log = defaultNow(c.Now), defaultLog(c.Log)
	return c
}

// NewWorker returns a Worker over cfg's ports. It panics if cfg.Allocator
// is nil.
func NewWorker(cfg WorkerConfig) *Worker {
	if cfg.Allocator == nil {
		panic("asyncevent: NewWorker without an Allocator")
	}
	return &Worker{cfg: cfg.withDefaults(), soldOut: map[string]bool{}}
}

func (w *Worker) now() int64 { return w.cfg.Now().UnixMilli() }

func (w *Worker) isSoldOut(eventID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.soldOut[eventID]
}

func (w *Worker) setSoldOut(eventID string, v bool) {
	w.mu.Lock()
	if v {
		w.soldOut[eventID] = true
	} else {
		delete(w.soldOut, eventID)
	}
	w.mu.Unlock()
}

// QueuedAtUnsure is how many of this Worker's queuedAt writes (a
// RECEIVED → PROCESSING of a request whose ingest died after the send)
// failed other than by their condition: at WriteTimeout, or on a broken
// connection. Such a write may still land, and land later than
// Lateness.Max allows, so each may become one late arrival (see
// Ingest.QueuedAtUnsure).
func (w *Worker) QueuedAtUnsure() int64 { return w.unsure.Load() }

// Outcome is what a worker should do with a delivered message.
type Outcome struct {
	// Ack says the message is done with: delete it. Otherwise leave it,
	// so SQS redelivers it after the visibility timeout (and, after
	// maxReceiveCount receives, moves it to the DLQ).
	Ack bool
	// Result names what happened, for logs and metrics: "succeeded",
	// "rejected", "collecting", "waiting" (an arrival candidate waits for
	// the allocator: acked, its message continued, see WorkerConfig.
	// CandidateWaits), "allocating" (the same once the continuations are
	// spent or could not be sent: not acked), "failed", "done-already",
	// "bad-message", "unknown-request" or "retry".
	Result string
	// Err is the failure behind "retry", "failed" and "bad-message".
	Err error
	// RetryAfter, when not zero, is when a redelivery of a message left on
	// the queue is useful: an arrival candidate's request is decided by the
	// allocator about Lateness.Max after its queuedAt, and the redelivery
	// that follows acks the message. A worker may shorten the message's
	// visibility timeout to it (sqsqueue.Queue.Delay) instead of holding
	// the message for the whole timeout.
	RetryAfter time.Duration

	// What metrics observe (zero when unknown). EventType is the
	// message'w. Status is the request's status after this delivery when
	// it is known: SUCCEEDED, REJECTED or FAILED_FINAL when the request is
	// terminal (decided now or by an earlier delivery), PROCESSING for a
	// lottery entry collected for the draw or an arrival candidate.
	// FinishedAt is set only when this delivery made the request terminal
	// (its finishedAt as written). QueuedAt is the request's queuedAt as
	// this delivery knows it (the stored one when it read the request,
	// else the message's SentAt), which times an arrival candidate's
	// redelivery (RetryAfter). The two delays (QueueDelay, E2EDelay;
	// docs/metrics.md) are measured from the stored times instead, by the
	// analytics publisher.
	EventType            EventType
	Status               Status
	QueuedAt, FinishedAt int64
}

// startTransition is the transition that starts processing msg at now:
// RECEIVED/QUEUED → PROCESSING, keeping the request's queuedAt; a lottery
// entry enters uiPhase COLLECTING, on condition that the event is still
// OPEN.
func startTransition(msg Message, d Delivery, now, queuedAt int64, shards int) *Transition {
	start := &Transition{
		RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
		From: []Status{StatusQueued, StatusReceived}, To: StatusProcessing, At: now,
		StartedAt: now, QueuedAt: queuedAt, KeepQueuedAt: true, Attempts: d.ReceiveCount, IndexShards: shards,
	}
	if msg.EventType == Lottery {
		start.UIPhase = PhaseCollecting
		start.RequireEventOpen = true
	}
	return start
}

// begin applies start. A lottery entry refused because the draw has
// started (EventStateError) is moved to PROCESSING without the lottery's
// phase or condition instead, and reported closed.
func (w *Worker) begin(ctx context.Context, start *Transition) (closed bool, err error) {
	err = w.transition(ctx, start)
	var ese *EventStateError
	if errors.As(err, &ese) {
		closed = true
		start.UIPhase, start.RequireEventOpen = "", false
		err = w.transition(ctx, start)
	}
	return closed, err
}

// Process handles one delivery of a participation message. It is
// idempotent: a redelivery finds the request PROCESSING (and continues) or
// terminal (and acks).
//
// FIRST_COME: RECEIVED/QUEUED → PROCESSING, then the capacity decrement and
// PROCESSING → SUCCEEDED in one transaction, or PROCESSING → REJECTED
// (REJECTED_CAPACITY) when no seat is left. That is 2 DynamoDB writes per
// message; the first rejection a worker sees for an event costs one more,
// after which it rejects with a sold-out condition check instead of trying
// the decrement.
//
// LOTTERY: RECEIVED/QUEUED → PROCESSING with uiPhase COLLECTING, on
// condition that the event is still OPEN (the draw has not started);
// otherwise the entry is REJECTED (REJECTED_LOTTERY_CLOSED).
//
// Infrastructure failures (throttling, 5xx, timeouts, conflicts) are
// retryable: the attempt and the error are recorded on the request and the
// message is left for redelivery. Validation failures (unknown event) are
// not: the request becomes FAILED_FINAL and the message is acked.
func (w *Worker) Process(ctx context.Context, d Delivery) (out Outcome) {
	msg, err := DecodeMessage(d.Body)
	if err != nil {
		return w.undecodable(ctx, d, err)
	}
	if w.cfg.Line != nil {
		w.cfg.Line.Kick(msg.EventID)
	}
	shards := 0
	if msg.EventType == FirstCome {
		cfg, err := w.cfg.Cache.get(ctx, w.cfg.Events, msg.EventID)
		if err == nil {
			shards = cfg.IndexShards
		}
		switch {
		case err == nil && cfg.Ordering == OrderArrival:
			return w.candidate(ctx, msg, d, cfg.IndexShards)
		case err != nil && !errors.Is(err, ErrEventNotFound):
			return w.retry(ctx, msg, d, err)
		}
	}
	now := w.now()
	queuedAt := d.SentAt.UnixMilli()
	if d.SentAt.IsZero() {
		queuedAt = now
	}
	start := startTransition(msg, d, now, queuedAt, shards)
	closed, err := w.begin(ctx, start) // closed: a lottery entry that arrived after the draw started
	defer func() {
		out.EventType, out.QueuedAt = msg.EventType, queuedAt
	}()
	// The steps that follow are timed after this one (or, on a
	// redelivery, after what an earlier delivery recorded), so that they
	// do not lose a write to Store.Transition's forward-time condition.
	floor := start.At + 1
	var se *StateError
	switch {
	case err == nil:
	case errors.As(err, &se):
		cur := se.Current
		if cur != nil && cur.QueuedAt != 0 {
			queuedAt = cur.QueuedAt
		}
		switch {
		case cur == nil:
			w.cfg.Log.Error("asyncevent: message for an unknown request", "requestId", msg.RequestID)
			return Outcome{Ack: true, Result: "unknown-request", Err: err}
		case cur.Status.Terminal():
			return Outcome{Ack: true, Result: "done-already", Status: cur.Status}
		case cur.Status == StatusProcessing:
			// A redelivery after a crash or a timeout: continue.
			floor = cur.LastChange() + 1
			if msg.EventType == Lottery {
				if cur.UIPhase != "" {
					return Outcome{Ack: true, Result: "collecting", Status: StatusProcessing}
				}
				closed = true
			}
		default:
			return w.retry(ctx, msg, d, err)
		}
	default:
		return w.retry(ctx, msg, d, err)
	}
	switch msg.EventType {
	case FirstCome:
		return w.takeSeat(ctx, msg, d, floor)
	default: // Lottery
		if !closed {
			return Outcome{Ack: true, Result: "collecting", Status: StatusProcessing}
		}
		return w.lotteryClosed(ctx, msg, d, floor)
	}
}

// candidate makes a FIRST_COME request of an arrival-ordered event a
// candidate for the allocator (PROCESSING, uiPhase ALLOCATING) and kicks
// this process's allocator loop. The request's message lives until the
// request is decided: each delivery that finds it undecided kicks an
// allocator again (see wait), so a crash of every allocator that knew of
// the event cannot strand it. A request still RECEIVED (its ingest died
// after the send) gets queuedAt = now, stamped within WriteTimeout of the
// write like ingest's; only that write has the timeout. A later delivery
// (a redelivery or a continuation) reads the request first (a read costs
// less than a refused transaction): most find it a candidate still, or
// decided.
func (w *Worker) candidate(ctx context.Context, msg Message, d Delivery, shards int) Outcome {
	if d.ReceiveCount > 1 || msg.Waits > 0 {
		r, err := w.cfg.Requests.GetRequest(ctx, msg.RequestID)
		switch {
		case errors.Is(err, ErrRequestNotFound):
			w.cfg.Log.Error("asyncevent: message for an unknown request", "requestId", msg.RequestID)
			return Outcome{Ack: true, Result: "unknown-request", Err: err}
		case err != nil:
			return w.retry(ctx, msg, d, err)
		case r.Status.Terminal():
			return Outcome{Ack: true, Result: "done-already", EventType: msg.EventType, Status: r.Status, QueuedAt: r.QueuedAt}
		case r.Status == StatusProcessing:
			return w.wait(ctx, msg, msg.Waits+d.ReceiveCount, Outcome{QueuedAt: r.QueuedAt})
		}
	}
	t := candidate(msg.RequestID, msg.EventID, msg.UserID, w.now(), 0, d.ReceiveCount, shards)
	t.From = []Status{StatusQueued}
	// As for a delivery decision, the message's SentAt stands for the
	// queuedAt ingest records just after the send.
	queuedAt := d.SentAt.UnixMilli()
	if d.SentAt.IsZero() {
		queuedAt = t.At
	}
	err := w.transition(ctx, t)
	var se *StateError
	if errors.As(err, &se) && se.Current != nil && se.Current.Status == StatusReceived {
		now := w.now()
		t = candidate(msg.RequestID, msg.EventID, msg.UserID, now, now, d.ReceiveCount, shards)
		wctx, cancel := context.WithTimeout(ctx, w.cfg.Lateness.WriteTimeout)
		err = w.transition(wctx, t)
		cancel()
		queuedAt = now
		if err != nil && !errors.As(err, new(*StateError)) {
			w.unsure.Add(1) // it may still land, late (QueuedAtUnsure)
		}
	}
	switch {
	case err == nil:
	case errors.As(err, &se) && se.Current == nil:
		w.cfg.Log.Error("asyncevent: message for an unknown request", "requestId", msg.RequestID)
		return Outcome{Ack: true, Result: "unknown-request", Err: err}
	case errors.As(err, &se) && se.Current.Status.Terminal():
		return Outcome{Ack: true, Result: "done-already", EventType: msg.EventType, Status: se.Current.Status, QueuedAt: se.Current.QueuedAt}
	case errors.As(err, &se) && se.Current.Status == StatusProcessing:
		return w.wait(ctx, msg, msg.Waits+d.ReceiveCount, Outcome{QueuedAt: se.Current.QueuedAt})
	default:
		return w.retry(ctx, msg, d, err)
	}
	// A new candidate: its wait starts now, whatever the receive count.
	return w.wait(ctx, msg, 1, Outcome{QueuedAt: queuedAt})
}

// wait is the outcome of a delivery that leaves an arrival candidate
// undecided, the deliveries-th of its message (receives and
// continuations; out carries its QueuedAt): it kicks this
// process's allocator loop and brings the message back when the decision
// is due (Allocator.retryAfter). While msg has continuations left
// (WorkerConfig.CandidateWaits) it sends msg again, delayed, with Waits + 1, and
// acks this delivery ("waiting"): waiting costs no receive, so a long
// queue does not push candidates into the DLQ. The copy is sent before
// this one is deleted, so a crash in between leaves two (the second finds
// the request decided and is acked). Without continuations left, without
// a queue (a Worker made with none), or if the send fails, the message
// is left on the queue, to come back after RetryAfter ("allocating"), and
// its receives count toward maxReceiveCount.
func (w *Worker) wait(ctx context.Context, msg Message, deliveries int, out Outcome) Outcome {
	w.cfg.Allocator.kick(msg.EventID)
	out.EventType, out.Status = msg.EventType, StatusProcessing
	after := w.cfg.Allocator.retryAfter(out.QueuedAt, deliveries)
	if w.cfg.Queue != nil && msg.Waits < w.cfg.CandidateWaits {
		next := msg
		next.Waits++
		err := w.cfg.Queue.SendAfter(ctx, next.Encode(), min(after, MaxSendDelay))
		if err == nil {
			out.Ack, out.Result = true, "waiting"
			return out
		}
		w.cfg.Log.Warn("asyncevent: could not continue a candidate's message; it stays on the queue", "requestId", msg.RequestID, "err", err)
	}
	out.Result, out.RetryAfter = "allocating", after
	return out
}

// takeSeat finishes a PROCESSING FIRST_COME request, timed no earlier
// than floor.
func (w *Worker) takeSeat(ctx context.Context, msg Message, d Delivery, floor int64) Outcome {
	for range 3 {
		now := max(w.now(), floor)
		if w.isSoldOut(msg.EventID) {
			t := rejectCapacity(msg, d, now)
			err := w.transition(ctx, t)
			if err == nil {
				return Outcome{Ack: true, Result: "rejected", Status: StatusRejected, FinishedAt: t.FinishedAt}
			}
			if !errors.Is(err, ErrCapacityLeft) {
				return w.settle(ctx, msg, d, err, floor)
			}
			w.setSoldOut(msg.EventID, false) // seats were added
		}
		t := &Transition{
			RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
			From: []Status{StatusProcessing}, To: StatusSucceeded, At: now,
			FinishedAt: now, UIResult: ResultSuccess, ResultCode: CodeSuccess, Attempts: d.ReceiveCount,
			TakeSeat: true,
		}
		err := w.transition(ctx, t)
		if err == nil {
			return Outcome{Ack: true, Result: "succeeded", Status: StatusSucceeded, FinishedAt: t.FinishedAt}
		}
		if !errors.Is(err, ErrCapacityExhausted) {
			return w.settle(ctx, msg, d, err, floor)
		}
		w.setSoldOut(msg.EventID, true)
	}
	return w.retry(ctx, msg, d, errCapacityChanged)
}

func rejectCapacity(msg Message, d Delivery, now int64) *Transition {
	return &Transition{
		RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
		From: []Status{StatusProcessing}, To: StatusRejected, At: now,
		FinishedAt: now, UIResult: ResultRejected, ResultCode: CodeRejectedCapacity, Attempts: d.ReceiveCount,
		RequireSoldOut: true,
	}
}

// lotteryClosed finishes a PROCESSING lottery request that arrived after
// the draw started (or whose event does not exist), timed no earlier than
// floor.
func (w *Worker) lotteryClosed(ctx context.Context, msg Message, d Delivery, floor int64) Outcome {
	if _, err := w.cfg.Events.GetEvent(ctx, msg.EventID, false); errors.Is(err, ErrEventNotFound) {
		return w.fail(ctx, msg, d, ErrorUnknownEvent, "event "+msg.EventID+" does not exist", floor)
	} else if err != nil {
		return w.retry(ctx, msg, d, err)
	}
	now := max(w.now(), floor)
	t := &Transition{
		RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
		From: []Status{StatusProcessing}, To: StatusRejected, At: now,
		FinishedAt: now, UIResult: ResultRejected, ResultCode: CodeRejectedLotteryClosed, Attempts: d.ReceiveCount,
		UIPhase: PhaseAnnounced, Message: "entry arrived after the draw started",
	}
	if err := w.transition(ctx, t); err != nil {
		return w.settle(ctx, msg, d, err, floor)
	}
	return Outcome{Ack: true, Result: "rejected", Status: StatusRejected, FinishedAt: t.FinishedAt}
}

// settle handles an error from a final transition timed no earlier than
// floor.
func (w *Worker) settle(ctx context.Context, msg Message, d Delivery, err error, floor int64) Outcome {
	var se *StateError
	switch {
	case errors.Is(err, ErrEventNotFound):
		return w.fail(ctx, msg, d, ErrorUnknownEvent, "event "+msg.EventID+" does not exist", floor)
	case errors.As(err, &se) && se.Current != nil && se.Current.Status.Terminal():
		return Outcome{Ack: true, Result: "done-already", Status: se.Current.Status}
	case errors.As(err, &se) && se.Current == nil:
		return Outcome{Ack: true, Result: "unknown-request", Err: err}
	}
	return w.retry(ctx, msg, d, err)
}

// fail makes a PROCESSING request FAILED_FINAL (non-retryable), timed no
// earlier than floor, and acks.
func (w *Worker) fail(ctx context.Context, msg Message, d Delivery, code, message string, floor int64) Outcome {
	now := max(w.now(), floor)
	t := &Transition{
		RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
		From: []Status{StatusProcessing}, To: StatusFailedFinal, At: now,
		FinishedAt: now, UIResult: ResultFailed, ResultCode: CodeFailedValidation, Attempts: d.ReceiveCount,
		FailureClass: NonRetryable, ErrorCode: code, ErrorMessage: truncate(message, MaxErrorMessage),
		Message: code,
	}
	err := w.transition(ctx, t)
	var se *StateError
	switch {
	case err == nil:
		return Outcome{Ack: true, Result: "failed", Err: fmt.Errorf("%s: %s", code, message), Status: StatusFailedFinal, FinishedAt: t.FinishedAt}
	case errors.As(err, &se) && se.Current != nil && se.Current.Status.Terminal():
		return Outcome{Ack: true, Result: "failed", Err: fmt.Errorf("%s: %s", code, message), Status: se.Current.Status}
	}
	return w.retry(ctx, msg, d, err)
}

// undecodable handles a message that does not decode (derr): retrying
// cannot fix it, so it is acked. If its body still names a request that
// is waiting for it (RECEIVED or QUEUED), that request would wait forever:
// it ends FAILED_FINAL / FAILED_SERDE (NON_RETRYABLE, errorCode
// BAD_MESSAGE). A message of a newer version than this worker's is not
// acked: a newer worker decodes it (or a redrive of the DLQ, once one
// runs). Without a valid request id there is no request to mark; a
// request already PROCESSING was taken by a message that decoded, and a
// lottery entry must stay counted, so it is left alone.
func (w *Worker) undecodable(ctx context.Context, d Delivery, derr error) Outcome {
	var head struct {
		V         int    `json:"v"`
		RequestID string `json:"requestId"`
	}
	if json.Unmarshal([]byte(d.Body), &head) != nil || !ValidID(head.RequestID) {
		w.cfg.Log.Error("asyncevent: dropping malformed message", "err", derr)
		return Outcome{Ack: true, Result: "bad-message", Err: derr}
	}
	if head.V > MessageVersion {
		// A newer Pacer wrote it (a deploy rolling out): not this
		// worker's to fail. It is left, so it comes back, and reaches
		// the DLQ if no newer worker takes it, to be redriven once one
		// runs.
		w.cfg.Log.Warn("asyncevent: message of a newer version left for a newer worker", "requestId", head.RequestID, "v", head.V)
		return Outcome{Result: "retry", Err: derr}
	}
	r, err := w.cfg.Requests.GetRequest(ctx, head.RequestID)
	switch {
	case errors.Is(err, ErrRequestNotFound):
		w.cfg.Log.Error("asyncevent: dropping malformed message of an unknown request", "requestId", head.RequestID, "err", derr)
		return Outcome{Ack: true, Result: "bad-message", Err: derr}
	case err != nil:
		return Outcome{Result: "retry", Err: err}
	case r.Status != StatusReceived && r.Status != StatusQueued:
		w.cfg.Log.Error("asyncevent: dropping malformed message", "requestId", r.RequestID, "status", r.Status, "err", derr)
		return Outcome{Ack: true, Result: "bad-message", Err: derr}
	}
	now := max(w.now(), r.LastChange()+1)
	// It gets its queuedAt and index keys, if it has none, so that the
	// event's list and stats show it (leaving RECEIVED takes it off the
	// pending index).
	queuedAt, shards := r.QueuedAt, 0
	if queuedAt == 0 {
		queuedAt = now
	}
	if cfg, err := w.cfg.Cache.get(ctx, w.cfg.Events, r.EventID); err == nil {
		shards = cfg.IndexShards
	}
	t := &Transition{
		RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID,
		QueuedAt: queuedAt, KeepQueuedAt: true, IndexShards: shards,
		// Both: ingest may mark it QUEUED between the read and this write.
		From: []Status{StatusReceived, StatusQueued}, To: StatusFailedFinal, At: now,
		FinishedAt: now, UIResult: ResultFailed, ResultCode: CodeFailedSerde, Attempts: d.ReceiveCount,
		FailureClass: NonRetryable, ErrorCode: ErrorBadMessage, ErrorMessage: truncate(derr.Error(), MaxErrorMessage),
		Message: ErrorBadMessage,
	}
	err = w.transition(ctx, t)
	var se *StateError
	switch {
	case err == nil:
		return Outcome{Ack: true, Result: "failed", Err: derr, EventType: r.EventType, Status: StatusFailedFinal,
			QueuedAt: r.QueuedAt, FinishedAt: t.FinishedAt}
	case errors.As(err, &se):
		// It moved on meanwhile: whoever moved it decides it.
		return Outcome{Ack: true, Result: "bad-message", Err: derr}
	}
	return Outcome{Result: "retry", Err: err}
}

// errCapacityChanged: the seat count kept changing while a request was
// being decided (a retryable conflict).
var errCapacityChanged = errors.New("capacity changed while deciding")

// retry records a retryable failure on the request (best effort) and
// leaves the message for redelivery.
func (w *Worker) retry(ctx context.Context, msg Message, d Delivery, err error) Outcome {
	code := ErrorCode(err)
	if rerr := w.cfg.Requests.RecordAttempt(context.WithoutCancel(ctx), Attempt{RequestID: msg.RequestID, Attempts: d.ReceiveCount,
		Code: code, Message: truncate(err.Error(), MaxErrorMessage), At: w.now(), WorkerID: w.cfg.WorkerID}); rerr != nil {
		w.cfg.Log.Warn("asyncevent: could not record attempt", "requestId", msg.RequestID, "err", rerr)
	}
	return Outcome{Result: "retry", Err: err}
}

// ErrorCode returns a short code for an infrastructure error: the AWS
// error code when there is one (e.g. "ThrottlingException"), "TIMEOUT" for
// deadlines, else "DEPENDENCY_ERROR".
func ErrorCode(err error) string {
	var coded interface{ ErrorCode() string }
	switch {
	case errors.As(err, &coded) && coded.ErrorCode() != "":
		return coded.ErrorCode()
	case errors.Is(err, context.DeadlineExceeded):
		return "TIMEOUT"
	}
	return "DEPENDENCY_ERROR"
}

// transition applies a transition of this worker: t records the worker's
// identity (WorkerConfig.WorkerID).
func (w *Worker) transition(ctx context.Context, t *Transition) error {
	t.WorkerID = w.cfg.WorkerID
	return w.cfg.Requests.Transition(ctx, t)
}
