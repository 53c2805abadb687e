package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// The arrival allocator's lease, fencing token and position live on the
// EventCapacity item (allocOwner, allocLeaseUntil, allocFence,
// allocQueuedAt, allocRequestId, allocLate), so that the capacity
// decrement, the fence check and the move of the position are one update.

// AcquireAllocation implements asyncevent.AllocStore.
func (s *Store) AcquireAllocation(ctx context.Context, l asyncevent.Lease) (*asyncevent.Capacity, error) {
	eventID, owner, now, until := l.EventID, l.Owner, l.Now, l.Until
	lease := expression.Name("allocLeaseUntil")
	var it CapacityItem
	err := s.caps.Update(capKey(eventID)).MustExist().
		Set("allocOwner", owner).Set("allocLeaseUntil", until).Add("allocFence", 1).
		If(expression.AttributeNotExists(lease).Or(lease.LessThan(expression.Value(now)))).
		Label("lease").RunNew(ctx, &it)
	var ce *ddb.ConditionError
	if errors.As(err, &ce) {
		if !ce.Exists() {
			return nil, fmt.Errorf("%w: %s has no capacity item", asyncevent.ErrEventNotFound, eventID)
		}
		return nil, asyncevent.ErrAllocationHeld
	}
	if err != nil {
		return nil, err
	}
	return it.capacity(), nil
}

// ReleaseAllocation implements asyncevent.AllocStore.
func (s *Store) ReleaseAllocation(ctx context.Context, eventID, owner string, fence int64) error {
	err := s.caps.Update(capKey(eventID)).Remove("allocLeaseUntil").
		If(expression.Name("allocOwner").Equal(expression.Value(owner))).
		If(expression.Name("allocFence").Equal(expression.Value(fence))).
		Label("lease").Run(ctx)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return nil // taken over meanwhile: not ours to release
	}
	return err
}

// UndecidedRequests implements asyncevent.AllocStore: a query of the event
// index (GSI2) from QAT#<from> up to QAT#<before>, filtered to QUEUED and
// PROCESSING (with a narrow GSI2, after reading the requests from the
// table).
func (s *Store) UndecidedRequests(ctx context.Context, eventID string, from, before int64) iter.Seq2[*asyncevent.Request, error] {
	if before <= from {
		return func(func(*asyncevent.Request, error) bool) {}
	}
	// '~' sorts after every request id character: hi is the last key of
	// the millisecond before `before`.
	lo, hi := "QAT#"+ddb.Millis(from)+"#", "QAT#"+ddb.Millis(before-1)+"#~"
	between := func(q *ddb.Query[RequestItem]) *ddb.Query[RequestItem] { return q.Between(lo, hi) }
	return s.eventIndex(ctx, eventID, between, asyncevent.StatusQueued, asyncevent.StatusProcessing)
}

// Allocate implements asyncevent.AllocStore: one transaction of the capacity
// update (conditional on the fence and the position; it renews the lease
// when a.LeaseUntil is set) and each decision's request update and
// StatusLog.
func (s *Store) Allocate(ctx context.Context, a *asyncevent.Allocation) error {
	if n := 1 + 2*len(a.Decisions); n > ddb.MaxTxOps {
		return fmt.Errorf("dynamostore: an allocation of %d decisions needs %d operations, more than %d", len(a.Decisions), n, ddb.MaxTxOps)
	}
	zero := int64(0)
	at := a.To.QueuedAt
	for _, d := range a.Decisions {
		at = max(at, d.At)
	}
	u := s.caps.Update(capKey(a.EventID)).Bounded("capacityRemaining", -a.Wins, &zero, nil).
		Set("allocQueuedAt", a.To.QueuedAt).Set("allocRequestId", a.To.RequestID).Set("updatedAt", at).
		If(expression.Name("allocFence").Equal(expression.Value(a.Fence)))
	if a.Late > 0 {
		u.Add("allocLate", a.Late)
	}
	if a.LeaseUntil != 0 {
		u.Set("allocLeaseUntil", a.LeaseUntil)
	}
	if a.From.RequestID == "" {
		u.If(expression.AttributeNotExists(expression.Name("allocRequestId")))
	} else {
		u.If(expression.Name("allocRequestId").Equal(expression.Value(a.From.RequestID)))
	}
	end, err := s.eventEnd(ctx, a.EventID)
	if err != nil {
		return err
	}
	ops := []*ddb.Op{u.Label("allocation").Op()}
	for _, d := range a.Decisions {
		if len(d.From) != 1 {
			return fmt.Errorf("dynamostore: allocation decision of %s needs one source state", d.RequestID)
		}
		ops = append(ops, s.transitionOps(d, d.From[0], end)...)
	}
	err = s.db.Transact(ctx, ops...)
	var te *ddb.TxError
	if !errors.As(err, &te) {
		return err
	}
	if te.Reason("allocation") != nil {
		return asyncevent.ErrAllocationFenced
	}
	if r := te.Reason("request"); r != nil {
		return txStateErr(a.Decisions[(r.Index-1)/2].RequestID, asyncevent.StatusProcessing, r)
	}
	return err
}
