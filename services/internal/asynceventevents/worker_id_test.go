package asynceventevents_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
)

// Two workers decide the requests of a delivery-ordered event (each the
// messages it is handed) and of an arrival-ordered one (worker-a makes
// them candidates, worker-b's allocator decides them). Every processed
// and delay event names the worker that decided its request, read back
// from the publisher's output; a requested event (ingest) names none.
func TestEventsNameTheDecidingWorker(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{Stream: true})
	ctx := context.Background()
	// Allocators allowing no lateness: nothing else writes these events.
	lateness := asyncevent.Lateness{WriteTimeout: time.Millisecond, ClockSkew: -1, IndexLag: -1}
	type process struct {
		worker *asyncevent.Worker
		alloc  *asyncevent.Allocator
	}
	workers := map[string]process{}
	for _, id := range []string{"worker-a", "worker-b"} {
		alloc := asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: env.Store, AllocLease: time.Minute, WorkerID: id, Lateness: lateness})
		workers[id] = process{alloc: alloc, worker: asyncevent.NewWorker(asyncevent.WorkerConfig{Requests: env.Store, Events: env.Store,
			Queue: env.Queue, Allocator: alloc, WorkerID: id, Lateness: lateness})}
	}
	decider := map[string]string{} // requestId → worker id
	deliver := func(w, eventID, user, requestID string) asyncevent.Outcome {
		body := asyncevent.Message{V: 1, RequestID: requestID, EventID: eventID, UserID: user, EventType: asyncevent.FirstCome}.Encode()
		return workers[w].worker.Process(ctx, asyncevent.Delivery{Body: body, ReceiveCount: 1, SentAt: time.Now()})
	}
	var ids []string
	for _, o := range []asyncevent.Ordering{asyncevent.OrderDelivery, asyncevent.OrderArrival} {
		ev := "ev-" + string(o)
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: ev, EventType: asyncevent.FirstCome, Capacity: 2, Ordering: o}); err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			user := fmt.Sprintf("u%d", i)
			p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: ev, UserID: user})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.RequestID)
			w := []string{"worker-a", "worker-b"}[i%2]
			if o == asyncevent.OrderArrival {
				w = "worker-a"
			}
			out := deliver(w, ev, user, p.RequestID)
			switch {
			case o == asyncevent.OrderDelivery && out.Ack && out.Status.Terminal():
				decider[p.RequestID] = w
			case o == asyncevent.OrderArrival && out.Result == "waiting":
				decider[p.RequestID] = "worker-b" // its allocator decides below
			default:
				t.Fatalf("%s: delivery to %s: %+v", p.RequestID, w, out)
			}
		}
		if o == asyncevent.OrderArrival {
			time.Sleep(5 * time.Millisecond)
			if res, err := workers["worker-b"].alloc.Allocate(ctx, ev); err != nil || res.Decided != 6 {
				t.Fatalf("allocate: %+v, %v", res, err)
			}
		}
	}

	dir := t.TempDir()
	cps := stream.NewDynamoCheckpoints(env.DDB.DB, env.DDB.Table.Name()+"-cp")
	if err := cps.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	sink, err := filesink.Open(filesink.Config{Dir: dir, BufferInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close() // after the publisher stops
	defer startPublisher(t, env, sink, 0)()
	var events []analytics.Detail
	asynceventtest.Eventually(t, 30*time.Second, "a processed event of every request", func() (bool, error) {
		if err := sink.Flush(); err != nil {
			return false, err
		}
		events = readEvents(t, dir)
		processed := map[string]bool{}
		for _, d := range events {
			processed[d.RequestID] = processed[d.RequestID] || d.EventKind == analytics.ParticipationProcessed
		}
		for _, id := range ids {
			if !processed[id] {
				return false, fmt.Errorf("%s has no processed event yet", id)
			}
		}
		return true, nil
	})
	named := map[string]int{}
	for _, d := range events {
		want := decider[d.RequestID]
		if d.EventKind == analytics.ParticipationRequested {
			want = ""
		}
		if d.WorkerID != want {
			t.Errorf("%s of %s (%s, %s): workerId %q, want %q", d.EventKind, d.RequestID, d.EventID, d.Status, d.WorkerID, want)
		}
		if d.EventKind == analytics.ParticipationProcessed {
			named[d.EventID+" "+d.WorkerID]++
		}
	}
	want := map[string]int{"ev-delivery worker-a": 3, "ev-delivery worker-b": 3, "ev-arrival worker-b": 6}
	if fmt.Sprint(named) != fmt.Sprint(want) {
		t.Errorf("processed events per event and worker: %v, want %v", named, want)
	}
}
