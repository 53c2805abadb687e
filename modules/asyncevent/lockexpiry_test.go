package asyncevent_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// crashingLocks is a store whose ShortenLock cancels its worker's context
// at the crashAt-th call: the worker dies mid-page.
type crashingLocks struct {
	asyncevent.LockJobStore
	calls   atomic.Int64
	crashAt int64
	crash   context.CancelFunc
}

func (c *crashingLocks) ShortenLock(ctx context.Context, eventID, userID string, ttl int64) (bool, error) {
	if c.calls.Add(1) == c.crashAt && c.crash != nil {
		c.crash()
	}
	return c.LockJobStore.ShortenLock(ctx, eventID, userID, ttl)
}

// An admin closes an event created without closesAt (so its locks would
// live to its 90-day end + 7 days): a worker brings every lock of the event
// (queued and stranded requests alike) down to the close + 7 days, paced,
// and dies in its second page; another worker (another process: its own
// cursor key) leaves the job alone while the first one's lease runs, then
// resumes it from the first page's end and finishes it. Each lock is
// shortened exactly once; another event's locks are not touched.
func TestAdminCloseBringsLocksDownAndSurvivesACrash(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, EventCacheTTL: -1})
	for _, id := range []string{"ev", "kept"} {
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: id, EventType: asyncevent.FirstCome, Capacity: 10}); err != nil {
			t.Fatal(err)
		}
	}
	var users []string
	for i := range 104 {
		users = append(users, fmt.Sprintf("u%03d", i))
		participate(t, env.Ingest, "ev", users[i])
	}
	env.Strand(t, "ev", "s1", "s2", "s3", "s4")
	users = append(users, "s1", "s2", "s3", "s4")
	participate(t, env.Ingest, "kept", "k1")
	lockTTL := func(event, user string) string {
		return num(rawItem(t, env, "IDEMP#"+event+"#"+user, "LOCK"), "ttl")
	}
	before := lockTTL("kept", "k1")

	closed, err := env.Admin.CloseEvent(ctx, "ev")
	if err != nil {
		t.Fatal(err)
	}
	want := strconv.FormatInt((closed.UpdatedAt+asyncevent.LockTTLAfter.Milliseconds())/1000, 10)
	if got := lockTTL("ev", "u000"); got == want || got == "" {
		t.Fatalf("lock ttl %q before the job, want the end's (later than %s)", got, want)
	}

	const rate = 2000
	// A job waits a minute after the close (another API may still admit a
	// participation for its event cache's TTL).
	if res, err := env.Operations.ExpireLocks(ctx); err != nil || res != (asyncevent.LockExpiry{}) {
		t.Fatalf("right after the close: %+v, %v; want the job left for a minute", res, err)
	}
	skew.Store(int64(2 * time.Minute))
	worker := func(id string, store asyncevent.LockJobStore) *asyncevent.Operations {
		return asyncevent.NewOperations(asyncevent.OperationsConfig{Requests: env.Store, Events: env.Store, Capacity: env.Store, LockJobs: store,
			Queue: env.Queue, WorkerID: id, Now: clock, LockExpiryRate: rate, LockJobLease: time.Minute})
	}
	aCtx, crash := context.WithCancel(ctx)
	a := &crashingLocks{LockJobStore: env.Store, crashAt: 103, crash: crash}
	start := time.Now()
	resA, err := worker("a", a).ExpireLocks(aCtx)
	if err == nil {
		t.Fatalf("worker a finished (%+v) though it crashed at its 103rd lock", resA)
	}
	// Paced: at most rate writes a second.
	if min := time.Duration(a.calls.Load()-1) * time.Second / rate; time.Since(start) < min {
		t.Fatalf("%d lock writes in %s, faster than %d/s", a.calls.Load(), time.Since(start), rate)
	}

	// Worker b is another process: its own DB, with its own random
	// cursor key.
	b := &crashingLocks{LockJobStore: dynamostore.New(ddb.New(env.Dynamo, ddb.Config{}).Table(env.DDB.Table.Name(), &dynamostore.Schema))}
	if res, err := worker("b", b).ExpireLocks(ctx); err != nil || res.Leased != 1 || b.calls.Load() != 0 {
		t.Fatalf("worker b during a's lease: %+v, %v, %d writes; want it to leave the job", res, err, b.calls.Load())
	}
	skew.Store(int64(5 * time.Minute)) // a's lease is over
	resB, err := worker("b", b).ExpireLocks(ctx)
	if err != nil || resB.Jobs != 1 || resB.Finished != 1 {
		t.Fatalf("worker b: %+v, %v; want the job finished", resB, err)
	}
	if n := b.calls.Load(); n != int64(len(users))-100 {
		t.Fatalf("worker b wrote %d locks, want the %d after a's saved page of 100", n, len(users)-100)
	}
	if got := resA.Shortened + resB.Shortened; got != int64(len(users)) {
		t.Fatalf("%d + %d locks shortened, want each of the %d once", resA.Shortened, resB.Shortened, len(users))
	}
	for _, u := range users {
		if got := lockTTL("ev", u); got != want {
			t.Fatalf("%s's lock ttl %q, want the close + 7 days = %s", u, got, want)
		}
	}
	if got := lockTTL("kept", "k1"); got != before {
		t.Fatalf("an open event's lock ttl moved: %q → %q", before, got)
	}
	if res, err := worker("c", env.Store).ExpireLocks(ctx); err != nil || res != (asyncevent.LockExpiry{}) {
		t.Fatalf("after the job: %+v, %v; want nothing to do", res, err)
	}
	// Closing again does not start the job again.
	if _, err := env.Admin.CloseEvent(ctx, "ev"); err != nil {
		t.Fatal(err)
	}
	var none []*asyncevent.LockJob
	for j, err := range env.Store.LockJobs(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		none = append(none, j)
	}
	if len(none) != 0 {
		t.Fatalf("jobs after closing a closed event: %+v", none)
	}
	var se *asyncevent.EventStateError
	if err := env.Store.CloseEvent(ctx, "ev", time.Now().UnixMilli(), &asyncevent.LockJob{EventID: "ev"}); !errors.As(err, &se) {
		t.Fatalf("the store's close of a closed event: %v, want an EventStateError", err)
	}
}
