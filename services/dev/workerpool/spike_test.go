package workerpool_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/internal/testbin"
	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/autoscale"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/dev/workerpool"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true})
}

// buildWorker builds the real asyncevent-worker binary (with the test's
// flags, see testbin).
func buildWorker(t *testing.T) string {
	t.Helper()
	return testbin.Build(t, ".", "github.com/pacerhq/pacer/services/asyncevent-worker")
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// A spike with the workers stopped fills the queue; the autoscaler then
// starts the computed number of worker processes at once, one is killed
// from outside mid-drain and replaced, the others finish its messages, and
// after the drain the pool scales in only once the damping window has
// passed. The desired and running sequences are asserted, and the
// processes are real: their pids live while they run and are gone once
// stopped.
func TestSpikeScalesOutDrainsAndScalesIn(t *testing.T) {
	bin := buildWorker(t)
	ctx := context.Background()
	env := asynceventtest.New(t, asynceventtest.Options{})
	// Delivery ordering: every message is done on its first delivery, so
	// the backlog the autoscaler sees is the spike alone (an arrival
	// candidate's message comes back once, a few seconds later).
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "spike", EventType: asyncevent.FirstCome, Capacity: 100,
		Ordering: asyncevent.OrderDelivery, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	const users = 350
	var wg sync.WaitGroup
	ids := make([]string, users)
	sem := make(chan struct{}, 16)
	for i := range users {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "spike", UserID: fmt.Sprintf("u%03d", i)})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = p.RequestID
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if n, err := env.Queue.Depth(ctx); err != nil || n != users {
		t.Fatalf("with no worker the queue holds %d (%v), want %d", n, err, users)
	}

	// target = 2 s / 100 ms × 5 = 100 per worker: 350 waiting → 4 workers
	// (local-aws-sqs counts in-flight messages in both figures, at most 20
	// here: still 4).
	cfg := autoscale.Config{AcceptableLatency: 2 * time.Second, ProcessingTime: 100 * time.Millisecond, Concurrency: 5, Min: 1, Max: 6, ScaleInWindow: 4 * time.Second}
	ctrl, err := autoscale.NewController(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	pool := workerpool.New(workerpool.Config{Command: bin, StopTimeout: 15 * time.Second, Stderr: os.Stderr, Env: []string{
		"PACER_ASYNCEVENT_TABLE=" + env.DDB.Table.Name(), "PACER_ASYNCEVENT_QUEUE=" + env.QueueName, "PACER_ASYNCEVENT_SETUP=0",
		"PACER_WORKER_CONCURRENCY=5", "PACER_WORKER_BATCH=5", "PACER_WORKER_WAIT=1s", "PACER_WORKER_VISIBILITY=3s", "PACER_WORKER_SWEEP_EVERY=0",
		"PACER_LOG_LEVEL=warn"}})
	t.Cleanup(func() { _ = pool.Close() })
	reg := prometheus.NewRegistry()
	var mu sync.Mutex
	var steps []workerpool.Step
	a := &workerpool.Autoscaler{Pool: pool, Controller: ctrl, Interval: 500 * time.Millisecond, Metrics: workerpool.NewMetrics(reg), Out: os.Stdout,
		Read: func(ctx context.Context) (int, int, error) {
			main, _, err := env.Queue.Counts(ctx)
			return main.Visible + main.Delayed, main.InFlight, err
		},
		OnStep: func(s workerpool.Step) { mu.Lock(); steps = append(steps, s); mu.Unlock() }}
	actx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); a.Run(actx) }()
	t.Cleanup(func() { stop(); <-done })

	// Scaled out: 4 live worker processes.
	asynceventtest.Eventually(t, 20*time.Second, "4 workers", func() (bool, error) { return pool.Running() == 4, nil })
	first := pool.Procs()
	for _, p := range first {
		if !alive(p.PID) {
			t.Fatalf("worker %d is not a live process", p.PID)
		}
	}
	fams := metricstest.Gather(t, reg)
	if d, r := fams.Value("pacer_workers_desired"), fams.Value("pacer_workers_running"); d != 4 || r != 4 {
		t.Fatalf("gauges desired %v running %v, want 4 and 4", d, r)
	}
	// Kill one from outside once the drain is under way.
	asynceventtest.Eventually(t, 30*time.Second, "the drain to start", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "spike")
		return err == nil && st.ByStatus[asyncevent.StatusSucceeded] > 0, err
	})
	victim := first[0].PID
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	// Replaced: the victim is gone and the pool runs what it decided (by
	// then the falling backlog may call for fewer than 4).
	asynceventtest.Eventually(t, 30*time.Second, "a replacement for the killed worker", func() (bool, error) {
		ps := pool.Procs()
		desired := int(metricstest.Gather(t, reg).Value("pacer_workers_desired"))
		return len(ps) == desired && !slices.ContainsFunc(ps, func(p workerpool.Proc) bool { return p.PID == victim }), nil
	})
	// Every request decided, by the others (the killed one's messages come
	// back after their 3 s visibility).
	asynceventtest.Eventually(t, 60*time.Second, "every request to finish", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "spike")
		if err != nil {
			return false, err
		}
		return st.ByStatus[asyncevent.StatusSucceeded] == 100 && st.ByStatus[asyncevent.StatusRejected] == users-100, fmt.Errorf("%v", st.ByStatus)
	})
	drained := time.Now()
	asynceventtest.Eventually(t, 30*time.Second, "scale in to 1", func() (bool, error) { return pool.Running() == 1, nil })
	scaledIn := time.Now()
	stop()
	<-done

	mu.Lock()
	defer mu.Unlock()
	var desired, running []int
	for _, s := range steps {
		if len(desired) == 0 || desired[len(desired)-1] != s.Desired {
			desired = append(desired, s.Desired)
		}
		if len(running) == 0 || running[len(running)-1] != s.Running {
			running = append(running, s.Running)
		}
	}
	t.Logf("%d evaluations; desired %v, running %v; killed at +%s, drained at +%s, scaled in at +%s", len(steps), desired, running,
		killedAt.Sub(steps[0].At).Round(100*time.Millisecond), drained.Sub(steps[0].At).Round(100*time.Millisecond), scaledIn.Sub(steps[0].At).Round(100*time.Millisecond))
	// Out at once to the computed 4; in step by step once the backlog is
	// drained, never up again after that, the running count following the
	// decisions. (Before the drain the desired count may rise once more: the
	// killed worker's messages come back to the backlog, and on a slow
	// machine the backlog per worker can call for one more.)
	var after []int
	for _, s := range steps {
		if !s.At.Before(drained) {
			after = append(after, s.Desired)
		}
	}
	// Running follows the decisions: it takes the decided counts in their
	// order, and may skip one only where the kill and a scale-in fell
	// between two evaluations (a worker stopped and another killed).
	if desired[0] != 4 || desired[len(desired)-1] != 1 || !slices.IsSortedFunc(after, func(a, b int) int { return b - a }) ||
		running[0] != desired[0] || !follows(running, desired) {
		t.Fatalf("desired %v (after the drain %v), running %v: want 4 first, down to 1 after the drain and never up again, running following", desired, after, running)
	}
	// Damped: each scale-in to d comes only once no evaluation of the last
	// window recommended more than d, and at least once the pool held more
	// workers than recommended.
	held := false
	for i, s := range steps {
		held = held || s.Desired > s.Recommended
		if i == 0 || s.Desired >= steps[i-1].Desired {
			continue
		}
		// The kill drops running below the held level, and the controller
		// does not scale out while it holds (TestControllerBounds): the
		// first evaluation after the kill may come down to what runs.
		if killedAt.After(steps[i-1].At) && !killedAt.After(s.At) && s.Desired == s.Running {
			continue
		}
		for _, e := range steps[:i] {
			if s.At.Sub(e.At) < cfg.ScaleInWindow && e.Recommended > s.Desired {
				t.Fatalf("scaled in to %d at +%s although +%s recommended %d within the window", s.Desired,
					s.At.Sub(steps[0].At), e.At.Sub(steps[0].At), e.Recommended)
			}
		}
	}
	if !held {
		t.Fatal("no evaluation held more workers than recommended: no damping")
	}
	for _, p := range first {
		if p.PID != pool.Procs()[0].PID && alive(p.PID) {
			t.Fatalf("stopped worker %d still runs", p.PID)
		}
	}
	st, err := env.Admin.EventStats(ctx, "spike")
	if err != nil || !st.InvariantOK || st.CapacityRemaining != 0 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

// follows reports whether running takes the values of desired in their
// order, skipping at most one of them (the step a kill and a scale-in
// together jump over).
func follows(running, desired []int) bool {
	i, skipped := 0, 0
	for _, r := range running {
		for i < len(desired) && desired[i] != r {
			i++
			skipped++
		}
		if i == len(desired) {
			return false
		}
		i++
	}
	return i == len(desired) && skipped <= 1
}

// follows accepts the decisions taken in order with at most one skipped,
// and nothing else.
func TestFollows(t *testing.T) {
	d := []int{4, 5, 4, 3, 2, 1}
	for _, c := range []struct {
		running []int
		want    bool
	}{
		{[]int{4, 5, 4, 3, 2, 1}, true},
		{[]int{4, 5, 3, 2, 1}, true},
		{[]int{4, 5, 3, 1}, false},
		{[]int{4, 5, 4, 3, 2}, false},
		{[]int{4, 6, 4, 3, 2, 1}, false},
		{[]int{4, 3, 5, 2, 1}, false},
	} {
		if got := follows(c.running, d); got != c.want {
			t.Errorf("follows(%v, %v) = %v, want %v", c.running, d, got, c.want)
		}
	}
}
