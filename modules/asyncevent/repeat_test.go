package asyncevent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
)

// singleUseHumans is a HumanVerifier whose tokens pass once, as a
// provider's do (Turnstile's siteverify fails a token it has seen), or
// is unreachable (down).
type singleUseHumans struct {
	mu   sync.Mutex
	down bool
	used map[string]bool
	// calls counts Verify calls.
	calls atomic.Int64
}

func (h *singleUseHumans) Verify(_ context.Context, token, _ string) (asyncevent.HumanVerdict, error) {
	h.calls.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return "", errors.New("dial tcp: connection refused")
	}
	if h.used[token] {
		return asyncevent.HumanFailed, nil
	}
	if h.used == nil {
		h.used = map[string]bool{}
	}
	h.used[token] = true
	return asyncevent.HumanPassed, nil
}

// A client whose 202 was lost retries with the token it sent, which the
// provider has consumed: it gets its requestId as a duplicate, for one
// GetItem of its lock, and so it does without a token or while the
// provider is down. Someone who never participated is still refused, for
// the same one read, and nothing is written on these paths. A new
// participation still costs 3 calls.
func TestRepeatAfterALost202GetsItsRequestID(t *testing.T) {
	t.Parallel()
	humans := &singleUseHumans{}
	env := asynceventtest.New(t, asynceventtest.Options{EventCacheTTL: time.Minute, Ingest: asyncevent.IngestConfig{Humans: humans}})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "h", EventType: asyncevent.FirstCome, Capacity: 10,
		HumanCheck: asyncevent.HumanCheck{Required: true}}); err != nil {
		t.Fatal(err)
	}
	in := func(user, token string) asyncevent.ParticipateInput {
		return asyncevent.ParticipateInput{EventID: "h", UserID: user, HumanToken: token}
	}
	if _, err := env.Ingest.Participate(ctx, in("warm-up", "t0")); err != nil { // caches the event
		t.Fatal(err)
	}
	env.Calls.Reset()
	first, err := env.Ingest.Participate(ctx, in("u1", "t1"))
	if err != nil || first.IsDuplicate {
		t.Fatalf("first participation: %+v %v", first, err)
	}
	if n := env.Calls.Total(); n != 3 {
		t.Fatalf("a new participation made %d calls (%s), want 3", n, env.Calls)
	}
	for _, c := range []struct {
		name  string
		token string
		down  bool
	}{{"the consumed token", "t1", false}, {"no token", "", false}, {"the provider down", "t1", true}} {
		humans.down = c.down
		env.Calls.Reset()
		p, err := env.Ingest.Participate(ctx, in("u1", c.token))
		if err != nil || !p.IsDuplicate || p.RequestID != first.RequestID {
			t.Fatalf("repeat with %s: %+v %v, want 202 %s as a duplicate", c.name, p, err, first.RequestID)
		}
		if gets, all := env.Calls.Count("DynamoDB.GetItem"), env.Calls.Total(); gets != 1 || all != 1 {
			t.Fatalf("repeat with %s made %d calls (%s), want 1 GetItem", c.name, all, env.Calls)
		}
	}
	// Someone else with a consumed token: refused, for one read.
	humans.down = false
	env.Calls.Reset()
	if _, err := env.Ingest.Participate(ctx, in("u2", "t1")); !errors.Is(err, asyncevent.ErrHumanCheckFailed) {
		t.Fatalf("a stranger with a used token: %v, want ErrHumanCheckFailed", err)
	}
	if gets, all := env.Calls.Count("DynamoDB.GetItem"), env.Calls.Total(); gets != 1 || all != 1 {
		t.Fatalf("a refused participation made %d calls (%s), want 1 GetItem", all, env.Calls)
	}
	// The lock cannot be read: not a refusal a repeat could take for an
	// answer, but retry.
	env.Calls.Reset()
	p, err := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: brokenLocks{env.Store}, Events: env.Store, Queue: env.Queue, Humans: humans}).
		Participate(ctx, in("u1", "t1"))
	if !errors.Is(err, asyncevent.ErrUnavailable) || p.RequestID != "" {
		t.Fatalf("lock unreadable: %+v %v, want ErrUnavailable", p, err)
	}
}

// brokenLocks is a store whose locks cannot be read.
type brokenLocks struct{ *dynamostore.Store }

func (brokenLocks) LockedRequest(context.Context, string, string) (string, bool, error) {
	return "", false, asynceventtest.Throttle
}

// A repeat after the event closed (closed early, or a lottery past its
// cutoff) gets its requestId; a new participation is refused as before.
// Each costs one GetItem.
func TestRepeatAfterTheEventClosed(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, EventCacheTTL: time.Minute})
	firstCome(t, env, "fc", 10)
	cutoff := time.Now().Add(time.Hour)
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lotto", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: cutoff.UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	fc := participate(t, env.Ingest, "fc", "u1")
	lotto := participate(t, env.Ingest, "lotto", "u1")
	if _, err := env.Admin.CloseEvent(ctx, "fc"); err != nil {
		t.Fatal(err)
	}
	shift.Store(int64(2 * time.Hour)) // past the lottery's cutoff
	for _, c := range []struct {
		event, id string
		closed    error
	}{{"fc", fc.RequestID, asyncevent.ErrEventClosed}, {"lotto", lotto.RequestID, asyncevent.ErrLotteryClosed}} {
		// A refusal caches the event: the calls counted below are the
		// participations' own.
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: c.event, UserID: "warm-up"}); !errors.Is(err, c.closed) {
			t.Fatalf("%s: warm-up: %v, want %v", c.event, err, c.closed)
		}
		env.Calls.Reset()
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: c.event, UserID: "u1"})
		if err != nil || !p.IsDuplicate || p.RequestID != c.id {
			t.Fatalf("%s: repeat after the close: %+v %v, want %s as a duplicate", c.event, p, err, c.id)
		}
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: c.event, UserID: "u2"}); !errors.Is(err, c.closed) {
			t.Fatalf("%s: new participation after the close: %v, want %v", c.event, err, c.closed)
		}
		if gets, all := env.Calls.Count("DynamoDB.GetItem"), env.Calls.Total(); gets != 2 || all != 2 {
			t.Fatalf("%s: a repeat and a refusal made %d calls (%s), want 2 GetItem", c.event, all, env.Calls)
		}
	}
}

// denyAll is an EventLimiter with no budget left.
type denyAll struct{}

func (denyAll) AllowParticipation(string, string, asyncevent.Budget) (bool, time.Duration) {
	return false, time.Second
}

// The event's own rate limit stays in front of a repeat's read: a
// participation past its budget is answered 429 for no call, closed event
// or not, and its retry within the budget gets its requestId.
func TestRateLimitBeforeARepeatsRead(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{EventCacheTTL: time.Minute})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 10,
		Limits: asyncevent.EventLimits{ParticipationsPerAddress: "1/m"}}); err != nil {
		t.Fatal(err)
	}
	want := participate(t, env.Ingest, "ev", "u1").RequestID
	if _, err := env.Admin.CloseEvent(ctx, "ev"); err != nil {
		t.Fatal(err)
	}
	limited := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue, Limiter: denyAll{}})
	in := asyncevent.ParticipateInput{EventID: "ev", UserID: "u1", ClientAddr: "192.0.2.1"}
	if _, err := limited.Participate(ctx, in); !errors.Is(err, asyncevent.ErrRateLimited) { // reads the event
		t.Fatalf("past the budget: %v, want ErrRateLimited", err)
	}
	env.Calls.Reset()
	if _, err := limited.Participate(ctx, in); !errors.Is(err, asyncevent.ErrRateLimited) || env.Calls.Total() != 0 {
		t.Fatalf("past the budget: %v after %s, want ErrRateLimited and no call", err, env.Calls)
	}
	if p, err := env.Ingest.Participate(ctx, in); err != nil || p.RequestID != want || !p.IsDuplicate {
		t.Fatalf("the retry: %+v %v, want %s as a duplicate", p, err, want)
	}
}

// 50 concurrent repeats after the close: all get the one requestId, for
// one GetItem each and nothing else.
func TestConcurrentRepeatsAfterTheClose(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{EventCacheTTL: time.Minute})
	firstCome(t, env, "ev", 10)
	want := participate(t, env.Ingest, "ev", "clicker").RequestID
	if _, err := env.Admin.CloseEvent(ctx, "ev"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: "warm-up"}); !errors.Is(err, asyncevent.ErrEventClosed) {
		t.Fatalf("warm-up: %v, want ErrEventClosed", err) // caches the event
	}
	env.Calls.Reset()
	const n = 50
	results, errs := participateAtOnce(env.Ingest, asyncevent.ParticipateInput{EventID: "ev", UserID: "clicker"}, n)
	for i, p := range results {
		if errs[i] != nil || !p.IsDuplicate || p.RequestID != want {
			t.Fatalf("repeat %d: %+v %v, want %s as a duplicate", i, p, errs[i], want)
		}
	}
	if gets, all := env.Calls.Count("DynamoDB.GetItem"), env.Calls.Total(); gets != n || all != n {
		t.Fatalf("%d repeats made %d calls (%s), want %d GetItem", n, all, env.Calls, n)
	}
	if got := fmt.Sprint(countItems(t, env, "REQUEST")); got != "1" {
		t.Fatalf("%s requests, want 1", got)
	}
}
