package asynceventworker_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
)

// A request stranded in RECEIVED (its ingest could neither enqueue it nor
// mark it failed) that nobody reads: a worker without the sweep leaves it
// there; a worker with the sweep re-enqueues and finishes it.
func TestWorkerSweepFinishesStrandedRequests(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	ctx := context.Background()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 5}); err != nil {
		t.Fatal(err)
	}
	env.Strand(t, "ev", "u1", "u2")
	var ids []string
	for r, err := range env.Store.SweepCandidates(ctx, time.Now().Add(time.Hour).UnixMilli(), time.Now().Add(-time.Hour).UnixMilli()) {
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != asyncevent.StatusReceived {
			t.Fatalf("candidate %+v, want RECEIVED", r)
		}
		ids = append(ids, r.RequestID)
	}
	if len(ids) != 2 {
		t.Fatalf("%d stranded requests, want 2", len(ids))
	}
	statuses := func() []asyncevent.Status {
		var out []asyncevent.Status
		for _, id := range ids {
			r, err := env.Store.GetRequest(ctx, id) // the store's read: no requeue on read
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Status)
		}
		return out
	}
	run := func(sweepEvery time.Duration) (stop func()) {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		ready := make(chan struct{})
		go func() {
			done <- asynceventworker.Run(ctx, asynceventworker.Config{
				Config: asynceventbackend.Config{
					Table: env.DDB.Table.Name(), Queue: env.QueueName,
					DynamoDB: env.Dynamo, SQS: env.SQS,
					RequeueAfter: 200 * time.Millisecond, Log: slog.Default(),
				},
				Concurrency: 4, Batch: 10, Visibility: 5 * time.Second, Wait: time.Second,
				SweepEvery: sweepEvery, Ready: func() { close(ready) },
			})
		}()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("worker: %v", err)
		}
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		}
	}

	// Without the sweep the worker has no message to act on.
	stop := run(0)
	time.Sleep(1500 * time.Millisecond)
	stop()
	for i, s := range statuses() {
		if s != asyncevent.StatusReceived {
			t.Fatalf("request %s is %s without a sweep, want still RECEIVED", ids[i], s)
		}
	}

	stop = run(300 * time.Millisecond)
	defer stop()
	asynceventtest.Eventually(t, 30*time.Second, "the sweeping worker to finish both", func() (bool, error) {
		for i, s := range statuses() {
			if s != asyncevent.StatusSucceeded {
				return false, errors.New(ids[i] + " is " + string(s))
			}
		}
		return true, nil
	})
}
