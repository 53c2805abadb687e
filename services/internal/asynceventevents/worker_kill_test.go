package asynceventevents_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/pacerhq/pacer/internal/testbin"
	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
)

// A worker process (the asyncevent-worker binary; arrival ordering, the
// default) decides a first wave of requests, then is SIGKILLed while it
// holds the second wave's messages as candidates, and the event's
// allocation lease (candidates wait MaxLateness, 3.5 s, for their
// decision, so they are in flight when it dies); a
// replacement worker finishes after the lease expires, while the
// publisher's sink fails its first puts. Afterwards every request is
// terminal and has exactly one requested, one processed and one delay
// event after de-duplication, none is missing, the winners are exactly the
// capacity, and each processed event names the worker that decided its
// request: the killed one for what it decided before dying, the
// replacement for the rest (both appear).
func TestNoEventLostWhenAWorkerIsKilled(t *testing.T) {
	t.Parallel()
	const capacity, users = 40, 60
	const killedID, replacementID = "killed-worker", "replacement-worker"
	env := asynceventtest.New(t, asynceventtest.Options{Stream: true, WorkerID: replacementID})
	ctx := context.Background()
	cps := stream.NewDynamoCheckpoints(env.DDB.DB, env.DDB.Table.Name()+"-cp")
	if err := cps.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: capacity}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	participate := func(from, to int) {
		for i := from; i < to; i++ {
			p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%02d", i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.RequestID)
		}
	}
	count := func() map[asyncevent.Status]int {
		st, err := env.Admin.EventStats(ctx, "ev")
		if err != nil {
			t.Fatal(err)
		}
		return st.ByStatus
	}

	dir := t.TempDir()
	sink, err := filesink.Open(filesink.Config{Dir: dir, BufferInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close() // after the publisher stops
	defer startPublisher(t, env, &flakySink{next: sink, fails: 3}, 0)()

	start := time.Now()
	// The real worker binary (built with the test's flags, see testbin).
	child := exec.Command(testbin.Build(t, ".", "github.com/pacerhq/pacer/services/asyncevent-worker"))
	child.Env = append(os.Environ(),
		"PACER_ASYNCEVENT_TABLE="+env.DDB.Table.Name(), "PACER_ASYNCEVENT_QUEUE="+env.QueueName, "PACER_ASYNCEVENT_SETUP=0",
		"PACER_WORKER_ID="+killedID, "PACER_WORKER_CONCURRENCY=10", "PACER_WORKER_OPS_ADDR=127.0.0.1:0",
		"PACER_WORKER_VISIBILITY=3s", "PACER_WORKER_WAIT=1s", "PACER_WORKER_SWEEP_EVERY=0")
	child.Stderr = os.Stderr
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() }) // it may be dead already
	participate(0, users/2)
	asynceventtest.Eventually(t, 30*time.Second, "the worker to decide the first wave", func() (bool, error) {
		by := count()
		return by[asyncevent.StatusSucceeded]+by[asyncevent.StatusRejected] == users/2, nil
	})
	participate(users/2, users)
	asynceventtest.Eventually(t, 30*time.Second, "the worker to hold second-wave candidates", func() (bool, error) {
		return count()[asyncevent.StatusProcessing] >= 3, nil
	})
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait() // "signal: killed", as intended
	t.Logf("killed the worker at %s: %v", time.Since(start).Round(time.Millisecond), count())

	stopWorker := env.StartWorkers(t, 1, consumer.Config{Concurrency: 10})
	asynceventtest.Eventually(t, 45*time.Second, "every request decided and published", decidedAndPublished(t, env, sink, dir, ids))
	stopWorker()
	t.Logf("all published at %s", time.Since(start).Round(time.Millisecond))

	events := readEvents(t, dir)
	byID, perRequest := dedup(t, events)
	succeeded := 0
	deciders := map[string]int{}
	for _, id := range ids {
		r := env.Request(t, id)
		got := perRequest[id]
		if got[analytics.ParticipationRequested] != 1 || got[analytics.ParticipationProcessed] != 1 || got[analytics.DelayMeasured] != 1 {
			t.Errorf("%s (%s): %d requested, %d processed and %d delay events after de-duplication, want 1 each", id, r.Status,
				got[analytics.ParticipationRequested], got[analytics.ParticipationProcessed], got[analytics.DelayMeasured])
		}
		if r.Status == asyncevent.StatusSucceeded {
			succeeded++
		}
		if r.WorkerID != killedID && r.WorkerID != replacementID {
			t.Errorf("%s (%s) was decided by %q", id, r.Status, r.WorkerID)
		}
		deciders[r.WorkerID]++
	}
	for _, d := range byID {
		if d.EventKind == analytics.ParticipationProcessed && d.WorkerID != env.Request(t, d.RequestID).WorkerID {
			t.Errorf("processed event of %s names %q, the request %q", d.RequestID, d.WorkerID, env.Request(t, d.RequestID).WorkerID)
		}
	}
	if succeeded != capacity {
		t.Errorf("%d succeeded, want %d", succeeded, capacity)
	}
	if deciders[killedID] == 0 || deciders[replacementID] == 0 {
		t.Errorf("requests decided per worker: %v; want some by each", deciders)
	}
	t.Logf("decided per worker: %v; %d lines, %d events after de-duplication", deciders, len(events), len(byID))
}
