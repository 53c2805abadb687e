package asyncevent_test

import (
	"context"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// receiveOne receives the queue's next delivery, waiting up to timeout. The
// delivery stays invisible for 30 s: long enough that a loaded machine
// (CI runs the adversarial tests beside this one) cannot let it come back
// before the test deletes or delays it, which would leave a stale receipt
// handle and the message on the queue.
func receiveOne(t *testing.T, env *asynceventtest.Env, timeout time.Duration) consumer.Message {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ms, err := env.Queue.Receive(ctx, 1, time.Second, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 1 {
			return ms[0]
		}
	}
	t.Fatalf("no delivery within %s", timeout)
	return consumer.Message{}
}

// An arrival candidate that waits for the allocator costs no receive: each
// delivery that finds it undecided continues the message (a delayed copy
// with waits + 1, receive count 1) and is acked, so a maxReceiveCount of 2
// is never reached however long the wait. Only after CandidateWaits
// continuations does the message stay on the queue ("allocating", not
// acked) for its receives to count. Once the allocator decides, the next
// delivery is acked and nothing is left on either queue.
func TestCandidateWaitsCostNoReceive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const waits = 3
	env := asynceventtest.New(t, asynceventtest.Options{MaxReceives: 2,
		Worker:    asyncevent.WorkerConfig{CandidateWaits: waits},
		Allocator: asyncevent.AllocatorConfig{AllocLease: time.Second},
		Lateness:  asyncevent.Lateness{WriteTimeout: 300 * time.Millisecond, ClockSkew: -1, IndexLag: -1}, // Max 0.3 s
	})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 1, Ordering: asyncevent.OrderArrival}); err != nil {
		t.Fatal(err)
	}
	p := participate(t, env.Ingest, "ev", "u1")
	// No allocator runs: the request stays a candidate.
	for i := 0; i <= waits; i++ {
		m := receiveOne(t, env, 15*time.Second)
		msg, err := asyncevent.DecodeMessage(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Waits != i || m.ReceiveCount != 1 || msg.RequestID != p.RequestID {
			t.Fatalf("delivery %d: waits %d, receive count %d, request %s; want waits %d, receive 1, %s", i, msg.Waits, m.ReceiveCount, msg.RequestID, i, p.RequestID)
		}
		out := env.Worker.Process(ctx, asyncevent.Delivery{Body: m.Body, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt})
		if i < waits {
			if !out.Ack || out.Result != "waiting" || out.Status != asyncevent.StatusProcessing || out.RetryAfter != 0 {
				t.Fatalf("delivery %d: %+v, want acked waiting", i, out)
			}
			if err := env.Queue.Delete(ctx, []string{m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// The continuations are spent: the message stays, and comes back
		// after RetryAfter (1 s, the minimum, would be earlier than the
		// escalation: 3 deliveries so far × the 1 s lease).
		if out.Ack || out.Result != "allocating" || out.RetryAfter != 3*time.Second {
			t.Fatalf("delivery %d: %+v, want not acked, allocating after 3s", i, out)
		}
		if err := env.Queue.Delay(ctx, m.ReceiptHandle, out.RetryAfter); err != nil {
			t.Fatal(err)
		}
	}
	m := receiveOne(t, env, 15*time.Second)
	if m.ReceiveCount != 2 {
		t.Fatalf("the spent message's redelivery has receive count %d, want 2", m.ReceiveCount)
	}
	if res, err := env.Allocator.Allocate(ctx, "ev"); err != nil || res.Decided != 1 || res.Won != 1 {
		t.Fatalf("allocate: %+v, %v", res, err)
	}
	out := env.Worker.Process(ctx, asyncevent.Delivery{Body: m.Body, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt})
	if !out.Ack || out.Result != "done-already" || out.Status != asyncevent.StatusSucceeded {
		t.Fatalf("after the decision: %+v, want acked done-already SUCCEEDED", out)
	}
	if err := env.Queue.Delete(ctx, []string{m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	asynceventtest.Eventually(t, 10*time.Second, "both queues empty", func() (bool, error) {
		main, dead, err := env.Queue.Depths(ctx)
		return main == 0 && dead == 0, err
	})
}
