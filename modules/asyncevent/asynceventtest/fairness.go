package asynceventtest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// Fairness says how far a FIRST_COME event's decisions are from the order
// of (queuedAt, requestId), the fairness standard.
type Fairness struct {
	Requests int
	Winners  int // SUCCEEDED
	Losers   int // REJECTED
	Pending  int // not terminal
	// Inversions counts the pairs (loser, winner) whose loser comes before
	// the winner in (queuedAt, requestId) order.
	Inversions int
	// LosersBeforeLastWinner counts the losers queued before the last
	// winner: 0 exactly when the winners are the first Winners requests.
	LosersBeforeLastWinner int
}

// FirstN reports whether the winners are exactly the first Winners
// requests in (queuedAt, requestId) order, and every request is decided.
func (f Fairness) FirstN() bool { return f.Pending == 0 && f.LosersBeforeLastWinner == 0 }

func (f Fairness) String() string {
	return fmt.Sprintf("requests=%d winners=%d losers=%d pending=%d inversions=%d losersBeforeLastWinner=%d",
		f.Requests, f.Winners, f.Losers, f.Pending, f.Inversions, f.LosersBeforeLastWinner)
}

// MeasureFairness counts the inversions among rs (in any order).
func MeasureFairness(rs []*asyncevent.Request) Fairness {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b *asyncevent.Request) int {
		return cmp.Or(cmp.Compare(a.QueuedAt, b.QueuedAt), cmp.Compare(a.RequestID, b.RequestID))
	})
	f := Fairness{Requests: len(rs)}
	last := -1
	for i, r := range rs {
		switch r.Status {
		case asyncevent.StatusSucceeded:
			f.Winners++
			f.Inversions += f.Losers // every loser so far is earlier than this winner
			last = i
		case asyncevent.StatusRejected:
			f.Losers++
		default:
			f.Pending++
		}
	}
	for _, r := range rs[:last+1] {
		if r.Status == asyncevent.StatusRejected {
			f.LosersBeforeLastWinner++
		}
	}
	return f
}

// EventRequests reads every queued request of an event (GSI2), failing the
// test on error.
func (e *Env) EventRequests(t testing.TB, eventID string) []*asyncevent.Request {
	t.Helper()
	var rs []*asyncevent.Request
	for r, err := range e.Store.AllEventRequests(context.Background(), eventID) {
		if err != nil {
			t.Fatalf("asynceventtest: event %s requests: %v", eventID, err)
		}
		rs = append(rs, r)
	}
	return rs
}
