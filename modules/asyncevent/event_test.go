package asyncevent_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// Closing a FIRST_COME event refuses new participations at once in the
// closing process and, past the cache, everywhere, writing nothing; a
// request accepted before the close still takes its seat.
func TestCloseEvent(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{EventCacheTTL: time.Minute})
	firstCome(t, env, "fc", 5)
	before := participate(t, env.Ingest, "fc", "u1")

	cfg, err := env.Admin.CloseEvent(ctx, "fc")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Status != asyncevent.EventClosed {
		t.Fatalf("status %s after close", cfg.Status)
	}
	stored, err := env.Admin.GetEvent(ctx, "fc")
	if err != nil || stored.Status != asyncevent.EventClosed || stored.UpdatedAt != cfg.UpdatedAt {
		t.Fatalf("stored event %+v, %v", stored, err)
	}

	env.Calls.Reset()
	fresh := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue})
	for name, in := range map[string]*asyncevent.Ingest{"closing process": env.Ingest, "process without a cache": fresh} {
		if _, err := in.Participate(ctx, asyncevent.ParticipateInput{EventID: "fc", UserID: "u3"}); !errors.Is(err, asyncevent.ErrEventClosed) {
			t.Errorf("%s: participate after close: %v, want ErrEventClosed", name, err)
		}
	}
	if n := env.Calls.Count("DynamoDB.TransactWriteItems") + env.Calls.Count("SQS"); n != 0 {
		t.Fatalf("refused participations wrote: %s", env.Calls)
	}

	// Closing again changes nothing.
	env.Calls.Reset()
	again, err := env.Admin.CloseEvent(ctx, "fc")
	if err != nil || again.Status != asyncevent.EventClosed || again.UpdatedAt != cfg.UpdatedAt {
		t.Fatalf("second close: %+v, %v", again, err)
	}
	if n := env.Calls.Count("DynamoDB.UpdateItem"); n != 0 {
		t.Fatalf("second close wrote: %s", env.Calls)
	}

	// Accepted before the close: processed as usual.
	env.StartWorkers(t, 1, consumer.Config{})
	rs := waitTerminal(t, env, []string{before.RequestID}, 30*time.Second)
	if rs[0].Status != asyncevent.StatusSucceeded {
		t.Fatalf("request accepted before the close ended %s/%s", rs[0].Status, rs[0].ResultCode)
	}

	for _, c := range []struct {
		id   string
		want error
	}{
		{"lot", asyncevent.ErrNotFirstCome},
		{"nope", asyncevent.ErrEventNotFound},
		{"bad#id", asyncevent.ErrInvalidID},
	} {
		if c.id == "lot" {
			if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lot", EventType: asyncevent.Lottery, Winners: 1,
				LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := env.Admin.CloseEvent(ctx, c.id); !errors.Is(err, c.want) {
			t.Errorf("close %s: %v, want %v", c.id, err, c.want)
		}
	}
	if lot, err := env.Admin.GetEvent(ctx, "lot"); err != nil || lot.Status != asyncevent.EventOpen {
		t.Fatalf("lottery after a refused close: %+v, %v", lot, err)
	}
}

// An invalid event's error is ErrInvalidEvent and names the setting.
func TestInvalidEventNamesTheSetting(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	future := time.Now().Add(time.Hour).UnixMilli()
	for field, in := range map[string]asyncevent.NewEvent{
		"capacityTotal":   {EventID: "e", EventType: asyncevent.FirstCome},
		"winners":         {EventID: "e", EventType: asyncevent.Lottery, LotteryCutoffAt: future},
		"lotteryCutoffAt": {EventID: "e", EventType: asyncevent.Lottery, Winners: 1},
		"seedCommitment":  {EventID: "e", EventType: asyncevent.FirstCome, Capacity: 1, SeedCommitment: "ab"},
		"closesAt":        {EventID: "e", EventType: asyncevent.Lottery, Winners: 1, LotteryCutoffAt: future, ClosesAt: future},
		"eventType":       {EventID: "e", EventType: "RAFFLE"},
		"ordering":        {EventID: "e", EventType: asyncevent.FirstCome, Capacity: 1, Ordering: "fifo"},
	} {
		_, err := env.Admin.CreateEvent(ctx, in)
		var ee *asyncevent.EventError
		if !errors.Is(err, asyncevent.ErrInvalidEvent) || !errors.As(err, &ee) || ee.Field != field || ee.Reason == "" {
			t.Errorf("%+v: %v, want an EventError naming %s", in, err, field)
		}
	}
}

// Ordering is a FIRST_COME setting: a lottery with one is refused, naming
// it, and a FIRST_COME event without one gets DefaultOrdering.
func TestEventOrdering(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	_, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "l", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli(), Ordering: asyncevent.OrderArrival})
	var ee *asyncevent.EventError
	if !errors.As(err, &ee) || ee.Field != "ordering" {
		t.Fatalf("lottery with an ordering: %v, want an EventError naming ordering", err)
	}
	for in, want := range map[asyncevent.Ordering]asyncevent.Ordering{"": asyncevent.DefaultOrdering, asyncevent.OrderArrival: asyncevent.OrderArrival} {
		id := "f" + string(in)
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: id, EventType: asyncevent.FirstCome, Capacity: 1, Ordering: in}); err != nil {
			t.Fatal(err)
		}
		if cfg, err := env.Admin.GetEvent(ctx, id); err != nil || cfg.Ordering != want {
			t.Fatalf("event created with ordering %q: %+v, %v; want %q stored", in, cfg, err, want)
		}
	}
}

// A participation whose event read was in flight when the event was closed
// goes through (it was accepted before the close was known), but does not
// cache the OPEN status it read: the next participation in the closing
// process is refused.
func TestCloseEventBeatsAReadInFlight(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "fc", 5)
	// The first event read waits, after reading, until released.
	var held atomic.Bool
	reading, release := make(chan struct{}), make(chan struct{})
	slow := &hookEvents{EventReader: env.Store, afterGetEvent: func() {
		if held.CompareAndSwap(false, true) {
			close(reading)
			<-release
		}
	}}
	// One process: its Ingest and Admin share an EventCache.
	events := asyncevent.NewEventCache(time.Minute)
	ingest := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: slow, Queue: env.Queue, Cache: events})
	admin := asyncevent.NewAdmin(asyncevent.AdminConfig{Events: env.Store, Requests: env.Store, Draw: env.Store, Cache: events})
	done := make(chan error, 1)
	go func() {
		_, err := ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "fc", UserID: "early"})
		done <- err
	}()
	<-reading
	if _, err := admin.CloseEvent(ctx, "fc"); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("participation read before the close: %v", err)
	}
	if _, err := ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "fc", UserID: "late"}); !errors.Is(err, asyncevent.ErrEventClosed) {
		t.Fatalf("participation after the close: %v, want ErrEventClosed", err)
	}
}

// Closing an event that another process closed already still drops this
// process's cached OPEN copy: a close that returned is in force here.
func TestCloseOfAClosedEventDropsTheCache(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "fc", 5)
	// Process a's Ingest and Admin share its EventCache; process b has its
	// own.
	process := func() (*asyncevent.Ingest, *asyncevent.Admin) {
		events := asyncevent.NewEventCache(time.Minute)
		return asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue, Cache: events}),
			asyncevent.NewAdmin(asyncevent.AdminConfig{Events: env.Store, Requests: env.Store, Draw: env.Store, Cache: events})
	}
	aIngest, aAdmin := process()
	_, bAdmin := process()
	participate(t, aIngest, "fc", "u1") // a caches OPEN
	if _, err := bAdmin.CloseEvent(ctx, "fc"); err != nil {
		t.Fatal(err)
	}
	if cfg, err := aAdmin.CloseEvent(ctx, "fc"); err != nil || cfg.Status != asyncevent.EventClosed {
		t.Fatalf("close in a: %+v %v", cfg, err)
	}
	if _, err := aIngest.Participate(ctx, asyncevent.ParticipateInput{EventID: "fc", UserID: "u2"}); !errors.Is(err, asyncevent.ErrEventClosed) {
		t.Fatalf("participation in a after its own close returned: %v, want ErrEventClosed", err)
	}
}
