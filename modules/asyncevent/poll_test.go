package asyncevent_test

import (
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// A poll of an arrival candidate is worth making once the allocator's
// watermark (now − Lateness.Max, 3.5 s by default) has passed its
// queuedAt; of anything else, on the client's own schedule.
func TestPollAfter(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	if d := (asyncevent.Lateness{}).Max(); d != 3500*time.Millisecond {
		t.Fatalf("default Lateness.Max %v, want 3.5 s (the cases below assume it)", d)
	}
	svc := asyncevent.NewQuery(asyncevent.QueryConfig{Now: func() time.Time { return now }})
	at := now.UnixMilli()
	for _, c := range []struct {
		name string
		r    asyncevent.Request
		want time.Duration
	}{
		{"candidate just queued", asyncevent.Request{Status: asyncevent.StatusProcessing, UIPhase: asyncevent.PhaseAllocating, QueuedAt: at}, 3500 * time.Millisecond},
		{"candidate queued 1.2 s ago", asyncevent.Request{Status: asyncevent.StatusProcessing, UIPhase: asyncevent.PhaseAllocating, QueuedAt: at - 1200}, 2300 * time.Millisecond},
		{"candidate past the watermark", asyncevent.Request{Status: asyncevent.StatusProcessing, UIPhase: asyncevent.PhaseAllocating, QueuedAt: at - 5000}, 0},
		{"queued", asyncevent.Request{Status: asyncevent.StatusQueued, QueuedAt: at}, 0},
		{"processing per message", asyncevent.Request{Status: asyncevent.StatusProcessing, QueuedAt: at}, 0},
		{"decided", asyncevent.Request{Status: asyncevent.StatusSucceeded, UIPhase: asyncevent.PhaseAllocated, QueuedAt: at}, 0},
		{"candidate without queuedAt", asyncevent.Request{Status: asyncevent.StatusProcessing, UIPhase: asyncevent.PhaseAllocating}, 0},
	} {
		if got := svc.PollAfter(&c.r); got != c.want {
			t.Errorf("%s: PollAfter %v, want %v", c.name, got, c.want)
		}
	}
}

// The hint travels as whole seconds, rounded up, so a client that honours
// it never polls before the allocator can have decided; no hint, no
// header.
func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, ""},
		{-time.Second, ""},
		{time.Millisecond, "1"},
		{time.Second, "1"},
		{2300 * time.Millisecond, "3"},
		{3500 * time.Millisecond, "4"},
	} {
		if got := asyncevent.RetryAfter(c.d); got != c.want {
			t.Errorf("RetryAfter(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// A candidate read earlier with PollAt pollAt is surely unchanged while
// the clock is earlier than pollAt by more than ClockSkew: the allocator,
// whose clock may run that far ahead, decides it only after pollAt.
func TestUnchanged(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	q := asyncevent.NewQuery(asyncevent.QueryConfig{Now: func() time.Time { return now }})
	r := asyncevent.Request{Status: asyncevent.StatusProcessing, UIPhase: asyncevent.PhaseAllocating, QueuedAt: now.UnixMilli() - 1000}
	at := q.PollAt(&r)
	if at != r.QueuedAt+3500 {
		t.Fatalf("PollAt %d, want queuedAt + 3.5 s", at)
	}
	for _, c := range []struct {
		pollAt int64
		want   bool
	}{
		{at, true},                      // 2.5 s ahead
		{now.UnixMilli() + 501, true},   // ahead by more than the skew
		{now.UnixMilli() + 500, false},  // by the skew only
		{now.UnixMilli(), false},        // now
		{now.UnixMilli() - 1000, false}, // past
		{0, false},                      // not a candidate
	} {
		if got := q.Unchanged(c.pollAt); got != c.want {
			t.Errorf("Unchanged(now%+d ms) = %v, want %v", c.pollAt-now.UnixMilli(), got, c.want)
		}
	}
	if d := q.Until(at); d != 2500*time.Millisecond {
		t.Errorf("Until %v, want 2.5 s", d)
	}
	queued := asyncevent.Request{Status: asyncevent.StatusQueued, QueuedAt: now.UnixMilli()}
	if q.PollAt(&queued) != 0 {
		t.Error("a QUEUED request has a PollAt")
	}
}
