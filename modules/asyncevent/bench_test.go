package asyncevent_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// candidates creates n requests of eventID that wait for their decision:
// PROCESSING (in uiPhase phase), queued 1 ms apart in the past.
func candidates(b *testing.B, env *asynceventtest.Env, eventID string, n int, phase asyncevent.UIPhase) []*asyncevent.Request {
	return waiting(b, env, eventID, n, asyncevent.StatusProcessing, phase)
}

// waiting creates n requests of eventID queued 1 ms apart in the past, in
// status to: QUEUED (no worker has taken its message yet) or PROCESSING
// in uiPhase phase.
func waiting(b *testing.B, env *asynceventtest.Env, eventID string, n int, to asyncevent.Status, phase asyncevent.UIPhase) []*asyncevent.Request {
	b.Helper()
	base := time.Now().Add(-time.Hour).UnixMilli()
	rs := make([]*asyncevent.Request, n)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				at := base + int64(i)
				r := &asyncevent.Request{RequestID: fmt.Sprintf("%s-%06d", eventID, i), EventID: eventID, UserID: fmt.Sprintf("u%06d", i),
					EventType: asyncevent.FirstCome, Status: asyncevent.StatusReceived, UIResult: asyncevent.ResultPending, RequestedAt: at}
				if _, _, err := env.Store.CreateRequest(ctx, r, 0); err != nil {
					b.Error(err)
					return
				}
				t := &asyncevent.Transition{RequestID: r.RequestID, EventID: eventID, UserID: r.UserID,
					From: []asyncevent.Status{asyncevent.StatusReceived}, To: to, At: at + 1, QueuedAt: at}
				if to == asyncevent.StatusProcessing {
					t.StartedAt, t.UIPhase = at+1, phase
				}
				if err := env.Store.Transition(ctx, t); err != nil {
					b.Error(err)
					return
				}
				r.Status, r.QueuedAt, r.StartedAt, r.UIPhase = to, at, t.StartedAt, t.UIPhase
				rs[i] = r
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return rs
}

// BenchmarkDecisions decides b.N FIRST_COME requests (all winners, so
// every decision takes a seat) under DynamoDB's conflict rule
// (asynceventtest.ConflictDynamo): per message, 30 at once as 3 workers of
// 10 handlers run the per-message capacity transaction (k = 1, the
// "delivery" ordering, docs/fairness.md), against the
// arrival allocator, which decides 49 per transaction. It reports
// decisions/s, the writes on the EventCapacity item per decision, and the
// transactions cancelled for a conflict per decision.
//
//	go test -run '^$' -bench Decisions -benchtime 1000x ./modules/asyncevent/
func BenchmarkDecisions(b *testing.B) {
	b.Run("per-message-k1", func(b *testing.B) {
		env := asynceventtest.New(b, asynceventtest.Options{EnforceConflicts: true})
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "bench", EventType: asyncevent.FirstCome,
			Capacity: int64(b.N), Ordering: asyncevent.OrderDelivery}); err != nil {
			b.Fatal(err)
		}
		rs := candidates(b, env, "bench", b.N, "")
		env.Conflict.TxConflicts.Store(0)
		capBefore := env.Conflict.Writes(env.DDB.Table.Name(), "EVENT#bench", "CAPACITY")
		work := make(chan *asyncevent.Request)
		var wg sync.WaitGroup
		var mu sync.Mutex
		failed := 0
		b.ResetTimer()
		for range 30 {
			wg.Go(func() {
				for r := range work {
					for {
						at := time.Now().UnixMilli()
						err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: r.RequestID, EventID: "bench", UserID: r.UserID,
							From: []asyncevent.Status{asyncevent.StatusProcessing}, To: asyncevent.StatusSucceeded, At: at, FinishedAt: at,
							UIResult: asyncevent.ResultSuccess, ResultCode: asyncevent.CodeSuccess, TakeSeat: true})
						if err == nil {
							break
						}
						// Conflict retries exhausted: the worker would leave the
						// message for a redelivery; here it tries again.
						mu.Lock()
						failed++
						mu.Unlock()
					}
				}
			})
		}
		for _, r := range rs {
			work <- r
		}
		close(work)
		wg.Wait()
		b.StopTimer()
		report(b, env, capBefore)
		b.ReportMetric(float64(failed)/float64(b.N), "gaveup/decision")
	})
	// The arrival allocator over candidates (their workers made them so),
	// and over requests still QUEUED (behind a spike the workers have not
	// reached their messages yet): it makes them candidates itself, a
	// batch's at once, before deciding them. rtt5ms adds 5 ms to each of
	// those promotions, a round trip to DynamoDB on AWS that DynamoDB Local
	// on loopback does not have.
	for _, c := range []struct {
		name string
		to   asyncevent.Status
		rtt  time.Duration
	}{
		{"arrival-batched-k49", asyncevent.StatusProcessing, 0},
		{"arrival-queued-k49", asyncevent.StatusQueued, 0},
		{"arrival-queued-k49-rtt5ms", asyncevent.StatusQueued, 5 * time.Millisecond},
	} {
		b.Run(c.name, func(b *testing.B) { arrivalBench(b, c.to, c.rtt) })
	}
}

// arrivalBench decides b.N requests, created in status to (see waiting),
// with the arrival allocator, its transitions each delayed by rtt.
func arrivalBench(b *testing.B, to asyncevent.Status, rtt time.Duration) {
	env := asynceventtest.New(b, asynceventtest.Options{EnforceConflicts: true})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "bench", EventType: asyncevent.FirstCome,
		Capacity: int64(b.N), Ordering: asyncevent.OrderArrival}); err != nil {
		b.Fatal(err)
	}
	waiting(b, env, "bench", b.N, to, asyncevent.PhaseAllocating)
	env.Conflict.TxConflicts.Store(0)
	capBefore := env.Conflict.Writes(env.DDB.Table.Name(), "EVENT#bench", "CAPACITY")
	al := asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: &slowTransitions{AllocStore: env.Store, delay: rtt}, AllocLease: time.Minute})
	b.ResetTimer()
	decided := 0
	for decided < b.N {
		res, err := al.Allocate(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		decided += res.Decided
	}
	b.StopTimer()
	if decided != b.N {
		b.Fatalf("decided %d, want %d", decided, b.N)
	}
	report(b, env, capBefore)
}

func report(b *testing.B, env *asynceventtest.Env, capBefore int64) {
	b.Helper()
	cp, err := env.Store.GetCapacity(ctx, "bench")
	if err != nil || cp.CapacityRemaining != 0 {
		b.Fatalf("capacity %+v, %v: want every seat taken", cp, err)
	}
	capWrites := env.Conflict.Writes(env.DDB.Table.Name(), "EVENT#bench", "CAPACITY") - capBefore
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(capWrites)/float64(b.N), "capwrites/decision")
	b.ReportMetric(float64(env.Conflict.TxConflicts.Load())/float64(b.N), "conflicts/decision")
}
