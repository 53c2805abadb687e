package asyncevent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Outcome is what a worker should do with a delivered message.
type Outcome struct {
	// Ack says the message is done with: delete it. Otherwise leave it,
	// so SQS redelivers it after the visibility timeout (and, after
	// maxReceiveCount receives, moves it to the DLQ).
	Ack bool
	// Result names what happened, for logs and metrics: "succeeded",
	// "rejected", "collecting", "waiting" (an arrival candidate waits for
	// the allocator: acked, its message continued, see Config.
	// CandidateWaits), "allocating" (the same once the continuations are
	// spent or could not be sent: not acked), "failed", "done-already",
	// "bad-message", "unknown-request" or "retry".
	Result string
	// Err is the failure behind "retry", "failed" and "bad-message".
	Err error
	// RetryAfter, when not zero, is when a redelivery of a message left on
	// the queue is useful: an arrival candidate's request is decided by the
	// allocator about MaxLateness after its queuedAt, and the redelivery
	// that follows acks the message. A worker may shorten the message's
	// visibility timeout to it (sqsqueue.Queue.Delay) instead of holding
	// the message for the whole timeout.
	RetryAfter time.Duration

	// What metrics observe (zero when unknown). EventType is the
	// message's. Status is the request's status after this delivery when
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
func (s *Service) begin(ctx context.Context, start *Transition) (closed bool, err error) {
	err = s.transition(ctx, start)
	var ese *EventStateError
	if errors.As(err, &ese) {
		closed = true
		start.UIPhase, start.RequireEventOpen = "", false
		err = s.transition(ctx, start)
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
func (s *Service) Process(ctx context.Context, d Delivery) (out Outcome) {
	msg, err := DecodeMessage(d.Body)
	if err != nil {
		return s.undecodable(ctx, d, err)
	}
	shards := 0
	if msg.EventType == FirstCome {
		cfg, err := s.event(ctx, msg.EventID)
		if err == nil {
			shards = cfg.IndexShards
		}
		switch {
		case err == nil && cfg.Ordering == OrderArrival:
			return s.candidate(ctx, msg, d, cfg.IndexShards)
		case err != nil && !errors.Is(err, ErrEventNotFound):
			return s.retry(ctx, msg, d, err)
		}
	}
	now := s.now()
	queuedAt := d.SentAt.UnixMilli()
	if d.SentAt.IsZero() {
		queuedAt = now
	}
	start := startTransition(msg, d, now, queuedAt, shards)
	closed, err := s.begin(ctx, start) // closed: a lottery entry that arrived after the draw started
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
			s.cfg.Log.Error("asyncevent: message for an unknown request", "requestId", msg.RequestID)
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
			return s.retry(ctx, msg, d, err)
		}
	default:
		return s.retry(ctx, msg, d, err)
	}
	switch msg.EventType {
	case FirstCome:
		return s.takeSeat(ctx, msg, d, floor)
	default: // Lottery
		if !closed {
			return Outcome{Ack: true, Result: "collecting", Status: StatusProcessing}
		}
		return s.lotteryClosed(ctx, msg, d, floor)
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
func (s *Service) candidate(ctx context.Context, msg Message, d Delivery, shards int) Outcome {
	if d.ReceiveCount > 1 || msg.Waits > 0 {
		r, err := s.store.GetRequest(ctx, msg.RequestID)
		switch {
		case errors.Is(err, ErrRequestNotFound):
			s.cfg.Log.Error("asyncevent: message for an unknown request", "requestId", msg.RequestID)
			return Outcome{Ack: true, Result: "unknown-request", Err: err}
		case err != nil:
			return s.retry(ctx, msg, d, err)
		case r.Status.Terminal():
			return Outcome{Ack: true, Result: "done-already", EventType: msg.EventType, Status: r.Status, QueuedAt: r.QueuedAt}
		case r.Status == StatusProcessing:
			return s.wait(ctx, msg, msg.Waits+d.ReceiveCount, Outcome{QueuedAt: r.QueuedAt})
		}
	}
	t := candidate(msg.RequestID, msg.EventID, msg.UserID, s.now(), 0, d.ReceiveCount, shards)
	t.From = []Status{StatusQueued}
	// As for a delivery decision, the message's SentAt stands for the
	// queuedAt ingest records just after the send.
	queuedAt := d.SentAt.UnixMilli()
	if d.SentAt.IsZero() {
		queuedAt = t.At
	}
	err := s.transition(ctx, t)
	var se *StateError
	if errors.As(err, &se) && se.Current != nil && se.Current.Status == StatusReceived {
		now := s.now()
		t = candidate(msg.RequestID, msg.EventID, msg.UserID, now, now, d.ReceiveCount, shards)
		wctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
		err = s.transition(wctx, t)
		cancel()
		queuedAt = now
		if err != nil && !errors.As(err, new(*StateError)) {
			s.unsure.Add(1) // it may still land, late (QueuedAtUnsure)
		}
	}
	switch {
	case err == nil:
	case errors.As(err, &se) && se.Current == nil:
		s.cfg.Log.Error("asyncevent: message for an unknown request", "requestId", msg.RequestID)
		return Outcome{Ack: true, Result: "unknown-request", Err: err}
	case errors.As(err, &se) && se.Current.Status.Terminal():
		return Outcome{Ack: true, Result: "done-already", EventType: msg.EventType, Status: se.Current.Status, QueuedAt: se.Current.QueuedAt}
	case errors.As(err, &se) && se.Current.Status == StatusProcessing:
		return s.wait(ctx, msg, msg.Waits+d.ReceiveCount, Outcome{QueuedAt: se.Current.QueuedAt})
	default:
		return s.retry(ctx, msg, d, err)
	}
	// A new candidate: its wait starts now, whatever the receive count.
	return s.wait(ctx, msg, 1, Outcome{QueuedAt: queuedAt})
}

// wait is the outcome of a delivery that leaves an arrival candidate
// undecided, the deliveries-th of its message (receives and
// continuations; out carries its QueuedAt): it kicks this
// process's allocator loop and brings the message back when the decision
// is due (retryAfter). While msg has continuations left
// (Config.CandidateWaits) it sends msg again, delayed, with Waits + 1, and
// acks this delivery ("waiting"): waiting costs no receive, so a long
// queue does not push candidates into the DLQ. The copy is sent before
// this one is deleted, so a crash in between leaves two (the second finds
// the request decided and is acked). Without continuations left, without
// a queue (a Service made with none), or if the send fails, the message
// is left on the queue, to come back after RetryAfter ("allocating"), and
// its receives count toward maxReceiveCount.
func (s *Service) wait(ctx context.Context, msg Message, deliveries int, out Outcome) Outcome {
	s.kick(msg.EventID)
	out.EventType, out.Status = msg.EventType, StatusProcessing
	after := s.retryAfter(out.QueuedAt, deliveries)
	if s.queue != nil && msg.Waits < s.cfg.CandidateWaits {
		next := msg
		next.Waits++
		err := s.queue.SendAfter(ctx, next.Encode(), min(after, MaxSendDelay))
		if err == nil {
			out.Ack, out.Result = true, "waiting"
			return out
		}
		s.cfg.Log.Warn("asyncevent: could not continue a candidate's message; it stays on the queue", "requestId", msg.RequestID, "err", err)
	}
	out.Result, out.RetryAfter = "allocating", after
	return out
}

// retryAfter is how long after now a later delivery of an arrival
// candidate queued at queuedAt finds it decided, after `deliveries`
// deliveries of its message so far (receives and continuations): once the
// watermark (now − MaxLateness) has passed queuedAt and the allocator has
// run (two AllocEvery periods, one for the run and one for its batches);
// at least a second, SQS's granularity. A later delivery that still finds
// the request undecided waits longer, an allocation lease per delivery so
// far: a crashed allocator's event is taken over when its lease expires.
func (s *Service) retryAfter(queuedAt int64, deliveries int) time.Duration {
	due := time.Duration(queuedAt-s.now())*time.Millisecond + s.cfg.MaxLateness() + 2*s.cfg.AllocEvery
	return max(due, time.Duration(deliveries-1)*s.cfg.AllocLease, time.Second)
}

// takeSeat finishes a PROCESSING FIRST_COME request, timed no earlier
// than floor.
func (s *Service) takeSeat(ctx context.Context, msg Message, d Delivery, floor int64) Outcome {
	for range 3 {
		now := max(s.now(), floor)
		if s.isSoldOut(msg.EventID) {
			t := rejectCapacity(msg, d, now)
			err := s.transition(ctx, t)
			if err == nil {
				return Outcome{Ack: true, Result: "rejected", Status: StatusRejected, FinishedAt: t.FinishedAt}
			}
			if !errors.Is(err, ErrCapacityLeft) {
				return s.settle(ctx, msg, d, err, floor)
			}
			s.setSoldOut(msg.EventID, false) // seats were added
		}
		t := &Transition{
			RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
			From: []Status{StatusProcessing}, To: StatusSucceeded, At: now,
			FinishedAt: now, UIResult: ResultSuccess, ResultCode: CodeSuccess, Attempts: d.ReceiveCount,
			TakeSeat: true,
		}
		err := s.transition(ctx, t)
		if err == nil {
			return Outcome{Ack: true, Result: "succeeded", Status: StatusSucceeded, FinishedAt: t.FinishedAt}
		}
		if !errors.Is(err, ErrCapacityExhausted) {
			return s.settle(ctx, msg, d, err, floor)
		}
		s.setSoldOut(msg.EventID, true)
	}
	return s.retry(ctx, msg, d, errCapacityChanged)
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
func (s *Service) lotteryClosed(ctx context.Context, msg Message, d Delivery, floor int64) Outcome {
	if _, err := s.store.GetEvent(ctx, msg.EventID, false); errors.Is(err, ErrEventNotFound) {
		return s.fail(ctx, msg, d, "UNKNOWN_EVENT", "event "+msg.EventID+" does not exist", floor)
	} else if err != nil {
		return s.retry(ctx, msg, d, err)
	}
	now := max(s.now(), floor)
	t := &Transition{
		RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
		From: []Status{StatusProcessing}, To: StatusRejected, At: now,
		FinishedAt: now, UIResult: ResultRejected, ResultCode: CodeRejectedLotteryClosed, Attempts: d.ReceiveCount,
		UIPhase: PhaseAnnounced, Message: "entry arrived after the draw started",
	}
	if err := s.transition(ctx, t); err != nil {
		return s.settle(ctx, msg, d, err, floor)
	}
	return Outcome{Ack: true, Result: "rejected", Status: StatusRejected, FinishedAt: t.FinishedAt}
}

// settle handles an error from a final transition timed no earlier than
// floor.
func (s *Service) settle(ctx context.Context, msg Message, d Delivery, err error, floor int64) Outcome {
	var se *StateError
	switch {
	case errors.Is(err, ErrEventNotFound):
		return s.fail(ctx, msg, d, "UNKNOWN_EVENT", "event "+msg.EventID+" does not exist", floor)
	case errors.As(err, &se) && se.Current != nil && se.Current.Status.Terminal():
		return Outcome{Ack: true, Result: "done-already", Status: se.Current.Status}
	case errors.As(err, &se) && se.Current == nil:
		return Outcome{Ack: true, Result: "unknown-request", Err: err}
	}
	return s.retry(ctx, msg, d, err)
}

// fail makes a PROCESSING request FAILED_FINAL (non-retryable), timed no
// earlier than floor, and acks.
func (s *Service) fail(ctx context.Context, msg Message, d Delivery, code, message string, floor int64) Outcome {
	now := max(s.now(), floor)
	t := &Transition{
		RequestID: msg.RequestID, EventID: msg.EventID, UserID: msg.UserID,
		From: []Status{StatusProcessing}, To: StatusFailedFinal, At: now,
		FinishedAt: now, UIResult: ResultFailed, ResultCode: CodeFailedValidation, Attempts: d.ReceiveCount,
		FailureClass: NonRetryable, ErrorCode: code, ErrorMessage: truncate(message, MaxErrorMessage),
		Message: code,
	}
	err := s.transition(ctx, t)
	var se *StateError
	switch {
	case err == nil:
		return Outcome{Ack: true, Result: "failed", Err: fmt.Errorf("%s: %s", code, message), Status: StatusFailedFinal, FinishedAt: t.FinishedAt}
	case errors.As(err, &se) && se.Current != nil && se.Current.Status.Terminal():
		return Outcome{Ack: true, Result: "failed", Err: fmt.Errorf("%s: %s", code, message), Status: se.Current.Status}
	}
	return s.retry(ctx, msg, d, err)
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
func (s *Service) undecodable(ctx context.Context, d Delivery, derr error) Outcome {
	var head struct {
		V         int    `json:"v"`
		RequestID string `json:"requestId"`
	}
	if json.Unmarshal([]byte(d.Body), &head) != nil || !ValidID(head.RequestID) {
		s.cfg.Log.Error("asyncevent: dropping malformed message", "err", derr)
		return Outcome{Ack: true, Result: "bad-message", Err: derr}
	}
	if head.V > MessageVersion {
		// A newer Pacer wrote it (a deploy rolling out): not this
		// worker's to fail. It is left, so it comes back, and reaches
		// the DLQ if no newer worker takes it, to be redriven once one
		// runs.
		s.cfg.Log.Warn("asyncevent: message of a newer version left for a newer worker", "requestId", head.RequestID, "v", head.V)
		return Outcome{Result: "retry", Err: derr}
	}
	r, err := s.store.GetRequest(ctx, head.RequestID)
	switch {
	case errors.Is(err, ErrRequestNotFound):
		s.cfg.Log.Error("asyncevent: dropping malformed message of an unknown request", "requestId", head.RequestID, "err", derr)
		return Outcome{Ack: true, Result: "bad-message", Err: derr}
	case err != nil:
		return Outcome{Result: "retry", Err: err}
	case r.Status != StatusReceived && r.Status != StatusQueued:
		s.cfg.Log.Error("asyncevent: dropping malformed message", "requestId", r.RequestID, "status", r.Status, "err", derr)
		return Outcome{Ack: true, Result: "bad-message", Err: derr}
	}
	now := max(s.now(), r.LastChange()+1)
	// It gets its queuedAt and index keys, if it has none, so that the
	// event's list and stats show it (leaving RECEIVED takes it off the
	// pending index).
	queuedAt, shards := r.QueuedAt, 0
	if queuedAt == 0 {
		queuedAt = now
	}
	if cfg, err := s.event(ctx, r.EventID); err == nil {
		shards = cfg.IndexShards
	}
	t := &Transition{
		RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID,
		QueuedAt: queuedAt, KeepQueuedAt: true, IndexShards: shards,
		// Both: ingest may mark it QUEUED between the read and this write.
		From: []Status{StatusReceived, StatusQueued}, To: StatusFailedFinal, At: now,
		FinishedAt: now, UIResult: ResultFailed, ResultCode: CodeFailedSerde, Attempts: d.ReceiveCount,
		FailureClass: NonRetryable, ErrorCode: "BAD_MESSAGE", ErrorMessage: truncate(derr.Error(), MaxErrorMessage),
		Message: "BAD_MESSAGE",
	}
	err = s.transition(ctx, t)
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
func (s *Service) retry(ctx context.Context, msg Message, d Delivery, err error) Outcome {
	code := ErrorCode(err)
	if rerr := s.store.RecordAttempt(context.WithoutCancel(ctx), msg.RequestID, d.ReceiveCount, code,
		truncate(err.Error(), MaxErrorMessage), s.now(), s.cfg.WorkerID); rerr != nil {
		s.cfg.Log.Warn("asyncevent: could not record attempt", "requestId", msg.RequestID, "err", rerr)
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
// identity (Config.WorkerID).
func (s *Service) transition(ctx context.Context, t *Transition) error {
	t.WorkerID = s.cfg.WorkerID
	return s.store.Transition(ctx, t)
}
