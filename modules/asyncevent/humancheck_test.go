package asyncevent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// fakeHumans is a HumanVerifier passing the token "good", failing any
// other, or unreachable (down); it records what it was asked.
type fakeHumans struct {
	mu    sync.Mutex
	down  bool
	asked []string // token@remoteIP
}

func (f *fakeHumans) Verify(_ context.Context, token, remoteIP string) (asyncevent.HumanVerdict, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, token+"@"+remoteIP)
	switch {
	case f.down:
		return "", errors.New("dial tcp: connection refused")
	case token == "good":
		return asyncevent.HumanPassed, nil
	}
	return asyncevent.HumanFailed, nil
}

// humanOutcomes counts the outcomes an Ingest reports.
type humanOutcomes struct {
	mu  sync.Mutex
	got map[asyncevent.HumanOutcome]int
}

func (o *humanOutcomes) HumanChecked(out asyncevent.HumanOutcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.got == nil {
		o.got = map[asyncevent.HumanOutcome]int{}
	}
	o.got[out]++
}

// An event requiring a human check takes a participation whose token
// passes; a missing, failed or (with the refuse policy) unverifiable
// token is refused before anything is written; with the admit policy an
// unverifiable one is admitted and the answer says so. Each outcome is
// reported.
func TestHumanCheck(t *testing.T) {
	t.Parallel()
	humans, outcomes := &fakeHumans{}, &humanOutcomes{}
	env := asynceventtest.New(t, asynceventtest.Options{Ingest: asyncevent.IngestConfig{Humans: humans, HumanChecks: outcomes}})
	for _, e := range []asyncevent.NewEvent{
		{EventID: "refuse", EventType: asyncevent.FirstCome, Capacity: 10, HumanCheck: asyncevent.HumanCheck{Required: true}},
		{EventID: "admit", EventType: asyncevent.FirstCome, Capacity: 10, HumanCheck: asyncevent.HumanCheck{Required: true, OnUnavailable: asyncevent.HumanAdmit}},
		{EventID: "open", EventType: asyncevent.FirstCome, Capacity: 10},
	} {
		cfg, err := env.Admin.CreateEvent(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]asyncevent.HumanPolicy{"refuse": asyncevent.HumanRefuse, "admit": asyncevent.HumanAdmit}[e.EventID]; cfg.HumanCheck != want {
			t.Fatalf("%s: stored policy %q, want %q", e.EventID, cfg.HumanCheck, want)
		}
		if got, err := env.Store.GetEvent(ctx, e.EventID, true); err != nil || got.HumanCheck != cfg.HumanCheck {
			t.Fatalf("%s: read back %+v %v", e.EventID, got, err)
		}
	}
	in := func(ev, user, token string) asyncevent.ParticipateInput {
		return asyncevent.ParticipateInput{EventID: ev, UserID: user, HumanToken: token, ClientAddr: "192.0.2.7"}
	}
	// Refusals write nothing.
	env.Calls.Reset()
	for _, c := range []struct {
		in   asyncevent.ParticipateInput
		down bool
		want error
	}{
		{in("refuse", "u1", ""), false, asyncevent.ErrHumanTokenMissing},
		{in("refuse", "u1", "bad"), false, asyncevent.ErrHumanCheckFailed},
		{in("refuse", "u1", "good"), true, asyncevent.ErrHumanCheckUnavailable},
	} {
		humans.down = c.down
		if _, err := env.Ingest.Participate(ctx, c.in); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v, want %v", c.in, err, c.want)
		}
	}
	if n := env.Calls.Count("DynamoDB.TransactWriteItems") + env.Calls.Count("SQS"); n != 0 {
		t.Fatalf("refused participations wrote: %s", env.Calls)
	}
	humans.down = false
	if p, err := env.Ingest.Participate(ctx, in("refuse", "u1", "good")); err != nil || p.RequestID == "" || p.HumanCheck != "" {
		t.Fatalf("passed: %+v %v", p, err)
	}
	humans.down = true
	p, err := env.Ingest.Participate(ctx, in("admit", "u2", "good"))
	if err != nil || p.RequestID == "" || p.HumanCheck != asyncevent.HumanAdmittedUnverified {
		t.Fatalf("admitted: %+v %v", p, err)
	}
	// An event without a check asks no one.
	asked := len(humans.asked)
	if _, err := env.Ingest.Participate(ctx, in("open", "u3", "")); err != nil || len(humans.asked) != asked {
		t.Fatalf("no check: %v, asked %v", err, humans.asked)
	}
	if humans.asked[0] != "bad@192.0.2.7" {
		t.Errorf("verifier asked %v, want the token and the client address", humans.asked)
	}
	want := map[asyncevent.HumanOutcome]int{"missing": 1, "failed": 1, "unavailable_refused": 1, "passed": 1, "unavailable_admitted": 1}
	if len(outcomes.got) != len(want) {
		t.Fatalf("outcomes %v, want %v", outcomes.got, want)
	}
	for k, n := range want {
		if outcomes.got[k] != n {
			t.Fatalf("outcomes %v, want %v", outcomes.got, want)
		}
	}
}

// Without a verifier, an event requiring a check is refused, saying the
// deployment has none; a bad policy is refused naming its field.
func TestHumanCheckSettings(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "h", EventType: asyncevent.FirstCome, Capacity: 1,
		HumanCheck: asyncevent.HumanCheck{Required: true, OnUnavailable: asyncevent.HumanAdmit}}); err != nil {
		t.Fatal(err)
	}
	_, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "h", UserID: "u1", HumanToken: "t"})
	if !errors.Is(err, asyncevent.ErrHumanCheckUnavailable) || !strings.Contains(err.Error(), "no verifier") {
		t.Fatalf("no verifier: %v", err)
	}
	for _, h := range []asyncevent.HumanCheck{{Required: true, OnUnavailable: "maybe"}, {OnUnavailable: asyncevent.HumanAdmit}} {
		_, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "bad", EventType: asyncevent.FirstCome, Capacity: 1, HumanCheck: h})
		var ee *asyncevent.EventError
		if !errors.As(err, &ee) || ee.Field != "humanCheck.onUnavailable" {
			t.Errorf("%+v: %v, want an EventError naming humanCheck.onUnavailable", h, err)
		}
	}
}
