package asyncevent_test

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// A lottery whose cutoff is 120 days after its first entry (more than
// RequestTTL): its entries and their logs are kept until after its end
// (the request RequestTTL, the log LogTTL after it), so they are there
// for the draw, and a repeat after the cutoff names a request that
// exists. At day 100 a failed enqueue of day 0 is found by a sweep of
// the event, which no lookback by day reaches (at most RequestTTL), and
// re-queued; the draw at day 121 decides both entries.
func TestLongLotteryOutlivesRequestTTL(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	var shift atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, Admin: asyncevent.AdminConfig{DrawGrace: time.Second}})
	cutoff := clock().Add(120 * day).UnixMilli()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "long", EventType: asyncevent.Lottery, Winners: 1, LotteryCutoffAt: cutoff}); err != nil {
		t.Fatal(err)
	}
	deliver := func(id, user string) {
		t.Helper()
		msg := asyncevent.Message{RequestID: id, EventID: "long", UserID: user, EventType: asyncevent.Lottery}
		if out := env.Worker.Process(ctx, asyncevent.Delivery{Body: msg.Encode(), ReceiveCount: 1, SentAt: clock()}); out.Result != "collecting" {
			t.Fatalf("%s's entry: %+v, want collecting", user, out)
		}
	}
	// Day 0: u1 enters; u2's enqueue fails.
	u1 := participate(t, env.Ingest, "long", "u1").RequestID
	deliver(u1, "u1")
	u2 := failEnqueue(t, env, "long", "u2").RequestID

	// checkKept checks that the requests and every log of theirs expire
	// no sooner than RequestTTL and LogTTL after the event's end.
	checkKept := func(when string, ids ...string) {
		t.Helper()
		for _, id := range ids {
			if ttl, want := num(rawItem(t, env, "REQ#"+id, "META"), "ttl"), strconv.FormatInt((cutoff+asyncevent.RequestTTL.Milliseconds())/1000, 10); ttl != want {
				t.Errorf("%s: request %s expires at %s, want %s (cutoff + RequestTTL)", when, id, ttl, want)
			}
			logs, err := env.Store.Logs(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range logs {
				if min := (cutoff + asyncevent.LogTTL.Milliseconds()) / 1000; l.TTL < min {
					t.Errorf("%s: log %s → %s of %s expires at %d, before %d (cutoff + LogTTL)", when, l.FromStatus, l.ToStatus, id, l.TTL, min)
				}
			}
		}
	}
	checkKept("day 0", u1, u2)

	// Day 100: the lookback by day stops at RequestTTL; a sweep of the
	// event finds u2, and its re-queue is logged for as long.
	shift.Store(int64(100 * day))
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{Lookback: 100 * day}); err != nil || res.FailedEnqueue != 0 {
		t.Fatalf("sweep by day at day 100: %+v %v, want nothing found (the lookback stops at RequestTTL)", res, err)
	}
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{EventID: "long", RequeueFailedEnqueue: true}); err != nil ||
		res != (asyncevent.SweepResult{FailedEnqueue: 1, FailedEnqueueRequeued: 1}) {
		t.Fatalf("sweep of the event at day 100: %+v %v, want u2's failed enqueue found and re-queued", res, err)
	}
	deliver(u2, "u2")
	checkKept("day 100", u1, u2)

	// Day 121: past the cutoff. A repeat gets its id; the draw decides
	// both entries.
	shift.Store(int64(121 * day))
	if p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "long", UserID: "u1"}); err != nil || !p.IsDuplicate || p.RequestID != u1 {
		t.Fatalf("repeat after the cutoff: %+v %v, want %s", p, err, u1)
	}
	res, err := env.Admin.Draw(ctx, "long", "")
	if err != nil || res.Entries != 2 || len(res.Winners) != 1 {
		t.Fatalf("draw: %+v %v, want 2 entries, 1 winner", res, err)
	}
	for _, id := range []string{u1, u2} {
		r := env.Request(t, id)
		if !r.Status.Terminal() || r.TTL*1000 <= res.DrawnAt {
			t.Errorf("after the draw: %+v, want decided and kept", r)
		}
		checkLogs(t, env, r)
	}
	checkKept("after the draw", u1, u2)
}
