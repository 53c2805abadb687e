package asyncevent

import (
	"context"
	"fmt"
	"iter"
	"time"
)

// Stats are an event's counts, computed on the server from its queued
// requests (GSI2) and those not queued (RECEIVED and failed enqueues, see
// AdminReader.PendingRequests).
type Stats struct {
	EventID   string
	EventType EventType
	// Total counts the event's requests in every status.
	Total        int
	ByStatus     map[Status]int
	ByResultCode map[ResultCode]int
	// DLQCandidates counts the event's requests being retried toward the
	// dead-letter queue, or already in it (Request.DLQCandidate).
	DLQCandidates int
	// FIRST_COME capacity; InvariantOK says capacityTotal −
	// capacityRemaining == #SUCCEEDED.
	CapacityTotal     int64
	CapacityRemaining int64
	InvariantOK       bool
}

// DLQCandidate reports whether r is a dead-letter candidate: it is not
// decided, and the last thing recorded on it is a retryable failure (its
// lastErrorAt is not earlier than any time a transition recorded, see
// Request.LastChange: a transition after a failure comes with a later
// delivery, seconds later). Its message is then being delivered again, and is
// in the DLQ once the queue's maxReceiveCount receives are spent; a
// worker that gets the last receive of a message whose previous holder
// vanished records that loss so (CodeWorkerLost). A request that moved on
// after its failure (a lottery entry collected for its draw, an arrival
// candidate waiting for the allocator) is not one, nor is a decided one,
// a failed enqueue included (an operator re-queues those: SweepStranded
// counts them). The times are the processes' clocks: a failure timed
// earlier than the transition before it by a clock behind is not counted
// until it recurs.
func (r *Request) DLQCandidate() bool {
	return !r.Status.Terminal() && r.LastErrorAt != 0 && r.LastErrorAt >= r.LastChange()
}

// statsAttempts bounds the reads EventStats makes of an event whose
// invariant does not hold, before it says so.
const statsAttempts = 4

// eventStats counts the requests of the event cfg configures (see
// Admin.EventStats): the queued ones, read from store, and, when pending
// is not nil, those it iterates (the not-queued ones; Operations.
// CheckCapacity passes nil: the invariant needs only the queued ones, a
// SUCCEEDED request being queued, and so spares the pending index's
// Queries). A FIRST_COME event whose invariant does not hold is read
// again after lateness.indexLag, up to statsAttempts reads in all.
func eventStats(ctx context.Context, store StatsReader, pending func(ctx context.Context, eventID string) iter.Seq2[*Request, error],
	cfg *EventConfig, lateness Lateness) (*Stats, error) {
	eventID := cfg.EventID
	for attempt := 1; ; attempt++ {
		st := &Stats{EventID: eventID, EventType: cfg.EventType, ByStatus: map[Status]int{}, ByResultCode: map[ResultCode]int{}, InvariantOK: true}
		// A request queued while it is read can be in both parts (the
		// indexes lag): counted once.
		queued := map[string]bool{}
		count := func(r *Request) {
			st.Total++
			st.ByStatus[r.Status]++
			if r.ResultCode != "" {
				st.ByResultCode[r.ResultCode]++
			}
			if r.DLQCandidate() {
				st.DLQCandidates++
			}
		}
		for r, err := range store.AllEventRequests(ctx, eventID) {
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			queued[r.RequestID] = true
			count(r)
		}
		if pending != nil {
			for r, err := range pending(ctx, eventID) {
				if err != nil {
					return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
				}
				if !queued[r.RequestID] {
					count(r)
				}
			}
		}
		if cfg.EventType != FirstCome {
			return st, nil
		}
		c, err := store.GetCapacity(ctx, eventID)
		if err != nil {
			return nil, err
		}
		st.CapacityTotal, st.CapacityRemaining = c.CapacityTotal, c.CapacityRemaining
		st.InvariantOK = c.CapacityTotal-c.CapacityRemaining == int64(st.ByStatus[StatusSucceeded])
		if st.InvariantOK || attempt == statsAttempts {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(lateness.indexLag()):
		}
	}
}
