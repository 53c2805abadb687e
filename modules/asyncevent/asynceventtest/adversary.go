package asynceventtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// Adversarial is one adversarial run: Users participate in an event
// through an Ingest (no HTTP), their messages go through a ReorderQueue,
// and Workers in-process workers, each with its own Worker and Allocator
// and random handling delays, decide them.
type Adversarial struct {
	Users   int
	Workers int
	// Reorder is the queue's adversary; its Seed also seeds the handling
	// delays.
	Reorder Reorder
	// MaxHandleDelay delays each handling by a random time below it,
	// before the worker's first write.
	MaxHandleDelay time.Duration
	// Consumer configures each worker (default: Concurrency 10, Wait
	// 50 ms, Visibility 2 s).
	Consumer consumer.Config
	// Ingesters is how many users participate at once (default 8).
	Ingesters int
	// Timeout bounds the wait for every request to be decided (default
	// 2 min).
	Timeout time.Duration
	// Kill, if set, is called (in its own goroutine) once every worker
	// runs, with the queue and a function that kills worker i as SIGKILL
	// would and starts a fresh one in its place: from then on the killed
	// worker makes no write (its handlers and its allocator are abandoned
	// mid-flight, a lease it holds is never released, its messages come
	// back after the visibility timeout).
	Kill func(q *ReorderQueue, kill func(i int))
}

// AdversarialResult is what a run measured.
type AdversarialResult struct {
	Fairness
	Queue   ReorderCounts
	Elapsed time.Duration
	// E2EP95 is the 95th percentile of finishedAt − queuedAt.
	E2EP95 time.Duration
	// Outcomes counts the workers' Outcome.Result values; Errors the
	// codes (ErrorCode) of their Outcome.Err.
	Outcomes, Errors map[string]int
	// Final are the event's requests at the end.
	Final []*asyncevent.Request
	// QueuedAtUnsure sums the Ingest's and every Worker's QueuedAtUnsure:
	// the queuedAt writes that may have landed late, the bound on the
	// event's late arrivals.
	QueuedAtUnsure int64
}

// RunAdversarial runs a against eventID (which must exist) and waits until
// every request is terminal.
func (e *Env) RunAdversarial(t testing.TB, eventID string, a Adversarial) AdversarialResult {
	t.Helper()
	if a.Consumer.Concurrency == 0 {
		a.Consumer.Concurrency = 10
	}
	if a.Consumer.Wait == 0 {
		a.Consumer.Wait = 50 * time.Millisecond
	}
	if a.Consumer.Visibility == 0 {
		a.Consumer.Visibility = 2 * time.Second
	}
	a.Consumer.StopTimeout = time.Second
	if a.Ingesters == 0 {
		a.Ingesters = 8
	}
	if a.Timeout == 0 {
		a.Timeout = 2 * time.Minute
	}
	q := NewReorderQueue(a.Reorder)
	start := time.Now()

	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(a.Reorder.Seed, 7))
	delay := func() time.Duration {
		if a.MaxHandleDelay <= 0 {
			return 0
		}
		mu.Lock()
		defer mu.Unlock()
		return time.Duration(rng.Int64N(int64(a.MaxHandleDelay)))
	}
	outcomes, errs := map[string]int{}, map[string]int{}
	var workers []*asyncevent.Worker // every worker started, under mu
	var wg sync.WaitGroup
	cancels := make([]context.CancelFunc, a.Workers)
	startWorker := func(i int) {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		store := &killable{WorkerStore: e.Store, AllocStore: e.Store, dead: ctx.Done()}
		alloc := asyncevent.NewAllocator(e.AllocatorConfig(store))
		w := asyncevent.NewWorker(e.WorkerConfig(store, q, alloc, asyncevent.NewEventCache(e.opts.EventCacheTTL)))
		mu.Lock()
		workers = append(workers, w)
		mu.Unlock()
		handle := func(hctx context.Context, m consumer.Message) bool {
			select {
			case <-time.After(delay()):
			case <-ctx.Done(): // killed: the delivery is abandoned
				return false
			}
			if ctx.Err() != nil {
				return false
			}
			out := w.Process(ctx, asyncevent.Delivery{Body: m.Body, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt})
			mu.Lock()
			outcomes[out.Result]++
			if out.Err != nil {
				errs[asyncevent.ErrorCode(out.Err)]++
			}
			mu.Unlock()
			return out.Ack
		}
		wg.Go(func() {
			if err := consumer.Run(ctx, q, handle, a.Consumer); err != nil {
				t.Errorf("asynceventtest: worker %d: %v", i, err)
			}
		})
		wg.Go(func() { alloc.Run(ctx) })
	}
	for i := range a.Workers {
		startWorker(i)
	}
	var kmu sync.Mutex // guards cancels once Kill runs
	var killer sync.WaitGroup
	over := false
	defer func() {
		kmu.Lock()
		over = true
		for _, c := range cancels {
			c()
		}
		kmu.Unlock()
		killer.Wait()
		wg.Wait()
	}()
	if a.Kill != nil {
		killer.Go(func() {
			a.Kill(q, func(i int) {
				kmu.Lock()
				defer kmu.Unlock()
				if over {
					return
				}
				cancels[i]()
				startWorker(i)
			})
		})
	}

	ingest := asyncevent.NewIngest(e.IngestConfig(q, asyncevent.NewEventCache(e.opts.EventCacheTTL)))
	users := make(chan int)
	var ing sync.WaitGroup
	for range a.Ingesters {
		ing.Go(func() {
			for u := range users {
				if _, err := ingest.Participate(context.Background(), asyncevent.ParticipateInput{EventID: eventID, UserID: fmt.Sprintf("user-%04d", u)}); err != nil {
					t.Errorf("asynceventtest: participate user-%04d: %v", u, err)
				}
			}
		})
	}
	for u := range a.Users {
		users <- u
	}
	close(users)
	ing.Wait()

	var rs []*asyncevent.Request
	Eventually(t, a.Timeout, fmt.Sprintf("%d requests of %s to be decided", a.Users, eventID), func() (bool, error) {
		rs = e.EventRequests(t, eventID)
		f := MeasureFairness(rs)
		return f.Requests == a.Users && f.Pending == 0, fmt.Errorf("%s", f)
	})
	mu.Lock()
	defer mu.Unlock()
	unsure := ingest.QueuedAtUnsure()
	for _, w := range workers {
		unsure += w.QueuedAtUnsure()
	}
	return AdversarialResult{Fairness: MeasureFairness(rs), Queue: q.Counts(), Elapsed: time.Since(start), Final: rs,
		Outcomes: maps.Clone(outcomes), Errors: maps.Clone(errs), E2EP95: e2eP95(rs), QueuedAtUnsure: unsure}
}

// killable is a worker's store, its Worker's and its Allocator's: once
// dead is closed, every write fails as if the process were gone (a write
// already sent may still land).
type killable struct {
	asyncevent.WorkerStore
	asyncevent.AllocStore
	dead <-chan struct{}
}

var errKilled = errors.New("asynceventtest: worker killed")

func (k *killable) alive() error {
	select {
	case <-k.dead:
		return errKilled
	default:
		return nil
	}
}

func (k *killable) Transition(ctx context.Context, t *asyncevent.Transition) error {
	if err := k.alive(); err != nil {
		return err
	}
	return k.WorkerStore.Transition(ctx, t)
}

func (k *killable) RecordAttempt(ctx context.Context, a asyncevent.Attempt) error {
	if err := k.alive(); err != nil {
		return err
	}
	return k.WorkerStore.RecordAttempt(ctx, a)
}

func (k *killable) AcquireAllocation(ctx context.Context, l asyncevent.Lease) (*asyncevent.Capacity, error) {
	if err := k.alive(); err != nil {
		return nil, err
	}
	return k.AllocStore.AcquireAllocation(ctx, l)
}

func (k *killable) ReleaseAllocation(ctx context.Context, eventID, owner string, fence int64) error {
	if err := k.alive(); err != nil {
		return err
	}
	return k.AllocStore.ReleaseAllocation(ctx, eventID, owner, fence)
}

func (k *killable) Allocate(ctx context.Context, a *asyncevent.Allocation) error {
	if err := k.alive(); err != nil {
		return err
	}
	return k.AllocStore.Allocate(ctx, a)
}

func e2eP95(rs []*asyncevent.Request) time.Duration {
	if len(rs) == 0 {
		return 0
	}
	d := make([]int64, len(rs))
	for i, r := range rs {
		d[i] = r.E2EDelay()
	}
	slices.Sort(d)
	return time.Duration(d[(len(d)*95-1)/100]) * time.Millisecond
}
