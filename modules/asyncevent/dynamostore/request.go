// Requests: creating one with its idempotency lock, and every write that
// moves it through the state machine with its StatusLog and capacity.

package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// CreateRequest implements asyncevent.IngestStore.
func (s *Store) CreateRequest(ctx context.Context, r *asyncevent.Request, lockTTL int64) (string, bool, error) {
	r.IdempotencyKey = IdempotencyKey(r.EventID, r.UserID)
	l, _, err := s.layoutOf(ctx, r.EventID)
	if err != nil {
		return "", false, err
	}
	item := &pendingRequestItem{RequestItem: *requestItem(r)}
	item.GSI3PK, item.GSI3SK = pendingKeys(r, l.shards)
	lock := &LockItem{EventID: r.EventID, UserID: r.UserID, RequestID: r.RequestID, CreatedAt: r.RequestedAt, TTL: lockTTL}
	log := &StatusLogItem{RequestID: r.RequestID, ToStatus: r.Status, OccurredAt: r.RequestedAt, Message: "received", TTL: logTTL(r.RequestedAt, l.endsAt)}
	err = s.db.Transact(ctx,
		s.locks.Create(lock).Label("lock"),
		s.pending.Create(item).Label("request"),
		s.logs.Create(log).Label("log"),
	)
	var te *ddb.TxError
	if errors.As(err, &te) {
		if reason := te.Reason("lock"); reason != nil && reason.Item != nil {
			var old LockItem
			if err := reason.Decode(&old); err != nil {
				return "", false, err
			}
			return old.RequestID, true, nil
		}
	}
	if err != nil {
		return "", false, err
	}
	return r.RequestID, false, nil
}

// LockedRequest implements asyncevent.IngestStore: one strongly
// consistent GetItem of the lock.
func (s *Store) LockedRequest(ctx context.Context, eventID, userID string) (string, bool, error) {
	it, err := s.locks.GetStrong(ctx, lockKey(eventID, userID))
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return it.RequestID, true, nil
}

// Transition implements asyncevent.Transitioner. With several From states it
// tries them in order, jumping to the request's current status when a
// condition fails on another of them, so that the StatusLog names the
// true source state.
//
// Times on a request only move forward: the write is conditional on t.At
// being later than every time already recorded on the request. Processes
// take their clock readings before they write (and their clocks may
// differ), so a worker's reading can predate ingest's QUEUED update that
// lands before the worker's write; the condition then fails, t's times
// are moved to just after the latest recorded one and the write is tried
// again. Without it the StatusLog (sorted by time) would list PROCESSING
// before QUEUED and queueDelayMs would be negative.
func (s *Store) Transition(ctx context.Context, t *asyncevent.Transition) error {
	if len(t.From) == 0 {
		return fmt.Errorf("dynamostore: transition of %s to %s without a source state", t.RequestID, t.To)
	}
	from := t.From[0]
	end, err := s.eventEnd(ctx, t.EventID)
	if err != nil {
		return err
	}
	// The status may move between tries while staying a valid source: a
	// worker can see RECEIVED, try from RECEIVED, and meanwhile ingest makes
	// it QUEUED. Follow it a few times rather than give the message up.
	for attempt := 0; ; attempt++ {
		err := s.transition(ctx, t, from, end)
		var se *asyncevent.StateError
		if !errors.As(err, &se) || se.Current == nil {
			return err
		}
		next := se.Current.Status
		last := se.Current.LastChange()
		early := next == from && last >= t.At // refused for its time, not its state
		if (next == from && !early) || !contains(t.From, next) || attempt >= 2*len(t.From)+1 {
			se.Want = t.From
			return err
		}
		from = next
		// The request moved after t's times were taken: this transition
		// comes after that move, in the request and in its log.
		if last >= t.At {
			shift := last + 1 - t.At
			t.At += shift
			if t.StartedAt != 0 {
				t.StartedAt += shift
			}
			if t.FinishedAt != 0 {
				t.FinishedAt += shift
			}
		}
	}
}

// requestTimes are the request attributes Request.LastChange reads.
var requestTimes = [...]string{"requestedAt", "queuedAt", "startedAt", "finishedAt", "requeuedAt"}

func contains(ss []asyncevent.Status, s asyncevent.Status) bool {
	for _, v := range ss {
		if v == s {
			return true
		}
	}
	return false
}

func (s *Store) transition(ctx context.Context, t *asyncevent.Transition, from asyncevent.Status, end int64) error {
	err := s.db.Transact(ctx, s.transitionOps(t, from, end)...)
	var te *ddb.TxError
	if !errors.As(err, &te) {
		return err
	}
	// The request's own state explains the most; then the guards.
	if r := te.Reason("request"); r != nil {
		return txStateErr(t.RequestID, from, r)
	}
	if r := te.Reason("capacity"); r != nil {
		if r.Item == nil {
			return fmt.Errorf("%w: %s has no capacity item", asyncevent.ErrEventNotFound, t.EventID)
		}
		return asyncevent.ErrCapacityExhausted
	}
	if r := te.Reason("soldout"); r != nil {
		if r.Item == nil {
			return fmt.Errorf("%w: %s has no capacity item", asyncevent.ErrEventNotFound, t.EventID)
		}
		return asyncevent.ErrCapacityLeft
	}
	if r := te.Reason("event"); r != nil {
		return eventStateErr(t.EventID, r.Item != nil, r.Decode)
	}
	return err
}

// transitionOps are the operations of t from the status from: the
// conditional request update, its StatusLog (kept LogTTL after the later
// of t.At and end, its event's end) and t's guards.
func (s *Store) transitionOps(t *asyncevent.Transition, from asyncevent.Status, end int64) []*ddb.Op {
	var request *ddb.Op
	if requestMachine.Allowed(from, t.To) {
		request = s.requests.UpdateExpr(requestKey(t.RequestID), transitionExpr(t, from))
	} else {
		// Refused before any call, with ddb's ErrTransition.
		request = ddb.Transition(s.requests, requestKey(t.RequestID), requestMachine, t.To, from).Op()
	}
	ops := []*ddb.Op{
		request.Label("request"),
		s.logs.Create(&StatusLogItem{
			RequestID: t.RequestID, FromStatus: from, ToStatus: t.To, OccurredAt: t.At, Message: t.Message, TTL: logTTL(t.At, end),
		}).Label("log"),
	}
	remaining := expression.Name("capacityRemaining")
	if t.TakeSeat {
		ops = append(ops, s.caps.UpdateExpr(capKey(t.EventID), takeSeatExpr(t.At)).Label("capacity"))
	}
	if t.RequireSoldOut {
		ops = append(ops, s.caps.Check(capKey(t.EventID)).If(remaining.LessThanEqual(expression.Value(0))).Label("soldout"))
	}
	if t.RequireEventOpen {
		// The entry is counted where it is admitted: the draw checks that
		// the index shows exactly this many entries before it ranks them.
		ops = append(ops, s.configs.Update(configKey(t.EventID)).Add("entryCount", 1).
			If(expression.Name("status").Equal(expression.Value(string(asyncevent.EventOpen)))).Label("event").Op())
	}
	return ops
}

// SetPhase implements asyncevent.DrawStore.
func (s *Store) SetPhase(ctx context.Context, requestID string, from, to asyncevent.UIPhase) error {
	err := s.requests.Update(requestKey(requestID)).Set("uiPhase", string(to)).
		If(expression.Name("status").Equal(expression.Value(string(asyncevent.StatusProcessing)))).
		If(expression.Name("uiPhase").Equal(expression.Value(string(from)))).
		Label("request").Run(ctx)
	return stateErr(requestID, err)
}

// RecordAttempt implements asyncevent.WorkerStore.
func (s *Store) RecordAttempt(ctx context.Context, a asyncevent.Attempt) error {
	requestID, attempts, code, message, at, workerID := a.RequestID, a.Attempts, a.Code, a.Message, a.At, a.WorkerID
	u := s.requests.Update(requestKey(requestID)).
		Set("lastErrorCode", code).Set("lastErrorMessage", message).Set("lastErrorAt", at).
		If(expression.Name("status").In(
			expression.Value(string(asyncevent.StatusReceived)),
			expression.Value(string(asyncevent.StatusQueued)),
			expression.Value(string(asyncevent.StatusProcessing))))
	if attempts > 0 {
		u.Set("attempts", attempts)
	}
	if workerID != "" {
		u.Set("workerId", workerID)
	}
	return stateErr(requestID, u.Label("attempt").Run(ctx))
}

// MarkRequeued implements asyncevent.SweepStore.
func (s *Store) MarkRequeued(ctx context.Context, requestID string, at, before int64) error {
	requeued := expression.Name("requeuedAt")
	err := s.requests.Update(requestKey(requestID)).Set("requeuedAt", at).
		If(expression.Name("status").Equal(expression.Value(string(asyncevent.StatusReceived)))).
		If(expression.Name("requestedAt").LessThan(expression.Value(before))).
		If(expression.AttributeNotExists(requeued).Or(requeued.LessThan(expression.Value(before)))).
		Label("requeue").Run(ctx)
	return stateErr(requestID, err)
}

// ReopenFailedEnqueue implements asyncevent.SweepStore.
func (s *Store) ReopenFailedEnqueue(ctx context.Context, r asyncevent.Reopen) error {
	requestID, finishedAt, at, openEvent := r.RequestID, r.FinishedAt, r.At, r.OpenEvent
	end, err := s.eventEnd(ctx, r.EventID)
	if err != nil {
		return err
	}
	u := s.requests.Update(requestKey(requestID)).
		Set("status", string(asyncevent.StatusReceived)).
		Set("uiResult", string(asyncevent.ResultPending)).
		Set("requeuedAt", at).
		Remove("finishedAt").Remove("resultCode").Remove("failureClass").Remove("errorCode").Remove("errorMessage").
		Remove("GSI1PK").Remove("GSI1SK"). // listed again once queued, at its new queuedAt
		If(expression.Name("status").Equal(expression.Value(string(asyncevent.StatusFailedFinal)))).
		If(expression.Name("resultCode").Equal(expression.Value(string(asyncevent.CodeFailedIngestEnqueue)))).
		If(expression.Name("finishedAt").Equal(expression.Value(finishedAt))).
		Label("request")
	ops := []*ddb.Op{u.Op(), s.logs.Create(&StatusLogItem{
		RequestID: requestID, FromStatus: asyncevent.StatusFailedFinal, ToStatus: asyncevent.StatusReceived,
		OccurredAt: at, Message: "operator re-queue", TTL: logTTL(at, end),
	}).Label("log")}
	if openEvent != "" {
		ops = append(ops, s.configs.Check(configKey(openEvent)).
			If(expression.Name("status").Equal(expression.Value(string(asyncevent.EventOpen)))).Label("event"))
	}
	err = s.db.Transact(ctx, ops...)
	var te *ddb.TxError
	if errors.As(err, &te) {
		if r := te.Reason("request"); r != nil {
			return txStateErr(requestID, asyncevent.StatusFailedFinal, r)
		}
		if r := te.Reason("event"); r != nil {
			return eventStateErr(openEvent, r.Item != nil, r.Decode)
		}
		if te.Reason("log") != nil {
			// Another re-queue of the same failure wrote this log first.
			return &asyncevent.StateError{RequestID: requestID, Want: []asyncevent.Status{asyncevent.StatusFailedFinal}}
		}
	}
	return err
}

// txStateErr is the *StateError of a transaction whose request action
// (expected in state want) was refused: r carries the request as it was.
func txStateErr(requestID string, want asyncevent.Status, r *ddb.TxReason) error {
	return requestStateErr(requestID, []asyncevent.Status{want}, r.Item != nil, r.Decode)
}

// stateErr turns a failed condition on a request into a *StateError.
func stateErr(requestID string, err error) error {
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) {
		return err
	}
	return requestStateErr(requestID, nil, ce.Exists(), ce.Decode)
}

// requestStateErr is the *asyncevent.StateError of a refused condition on
// a request: exists says whether the request exists, and decode reads it as
// it is now.
func requestStateErr(requestID string, want []asyncevent.Status, exists bool, decode func(any) error) error {
	se := &asyncevent.StateError{RequestID: requestID, Want: want}
	if exists {
		var it RequestItem
		if err := decode(&it); err != nil {
			return err
		}
		se.Current = it.request()
	}
	return se
}
