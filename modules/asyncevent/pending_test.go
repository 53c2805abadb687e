package asyncevent_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
)

// Requests that are not queued (RECEIVED: stranded; FAILED_FINAL /
// FAILED_INGEST_ENQUEUE: their enqueue failed) are in the admin list, its
// status filters and the stats of their event, and only of their event;
// the sweep and the open events' listing find what they need by Query, and
// nothing scans the table.
func TestRequestsNotQueuedAreListedCountedAndSweptByQuery(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 10)
	firstCome(t, env, "other", 10)
	var queued, received, failed []string
	for _, u := range []string{"u0", "u1", "u2"} {
		queued = append(queued, participate(t, env.Ingest, "ev", u).RequestID)
	}
	env.Strand(t, "ev", "s1", "s2")
	env.Strand(t, "other", "s3")
	for _, u := range []string{"s1", "s2"} {
		received = append(received, participate(t, env.Ingest, "ev", u).RequestID) // the duplicate names it
	}
	env.SQS.SetSendFault(asynceventtest.Throttle)
	failed = append(failed, participate(t, env.Ingest, "ev", "f1").RequestID)
	env.SQS.SetSendFault(nil)

	list := func(status asyncevent.Status, limit int) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for page := 0; ; page++ {
			p, err := env.Admin.EventRequests(ctx, "ev", status, limit, cursor)
			if err != nil {
				t.Fatalf("list %q page %d: %v", status, page, err)
			}
			if len(p.Requests) == 0 && p.Cursor != "" {
				t.Fatalf("list %q page %d: empty with a cursor", status, page)
			}
			for _, r := range p.Requests {
				ids = append(ids, r.RequestID)
			}
			if cursor = p.Cursor; cursor == "" {
				return ids
			}
		}
	}
	sorted := func(ss ...[]string) []string { return slices.Sorted(slices.Values(slices.Concat(ss...))) }
	for _, limit := range []int{1, 2, 3, 100} {
		all := list("", limit)
		if got, want := sorted(all), sorted(queued, received, failed); !slices.Equal(got, want) {
			t.Fatalf("list (limit %d): %v, want every request of the event once: %v", limit, got, want)
		}
		// Not queued first, newest first: f1, s2, s1.
		if want := []string{failed[0], received[1], received[0]}; !slices.Equal(all[:3], want) {
			t.Fatalf("list (limit %d) starts %v, want the pending requests newest first %v", limit, all[:3], want)
		}
	}
	for _, c := range []struct {
		status asyncevent.Status
		want   []string
	}{{asyncevent.StatusReceived, received}, {asyncevent.StatusFailedFinal, failed}, {asyncevent.StatusQueued, queued}} {
		if got := sorted(list(c.status, 1)); !slices.Equal(got, sorted(c.want)) {
			t.Fatalf("list %s: %v, want %v", c.status, got, sorted(c.want))
		}
	}
	// A cursor of this event's list does not page another event's.
	p, err := env.Admin.EventRequests(ctx, "ev", "", 1, "")
	if err != nil || p.Cursor == "" {
		t.Fatalf("first page: %+v, %v", p, err)
	}
	if _, err := env.Admin.EventRequests(ctx, "other", "", 1, p.Cursor); !errors.Is(err, asyncevent.ErrCursor) {
		t.Fatalf("another event's cursor: %v, want ErrCursor", err)
	}

	st, err := env.Admin.EventStats(ctx, "ev")
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 6 || st.ByStatus[asyncevent.StatusReceived] != 2 || st.ByStatus[asyncevent.StatusFailedFinal] != 1 ||
		st.ByStatus[asyncevent.StatusQueued] != 3 || st.ByResultCode[asyncevent.CodeFailedIngestEnqueue] != 1 || !st.InvariantOK {
		t.Fatalf("stats %+v, want 6 requests: 3 QUEUED, 2 RECEIVED, 1 FAILED_FINAL / FAILED_INGEST_ENQUEUE", st)
	}

	// The sweep: one Query per shard of each day it looks back over.
	env.Calls.Reset()
	res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{Lookback: time.Hour})
	if err != nil || res.FailedEnqueue != 1 {
		t.Fatalf("sweep: %+v, %v; want the failed enqueue counted", res, err)
	}
	now := time.Now()
	days := 1
	if now.Add(-time.Hour).UTC().Day() != now.Add(time.Hour).UTC().Day() {
		days = 2
	}
	if scans, queries := env.Calls.Count("DynamoDB.Scan"), env.Calls.Count("DynamoDB.Query"); scans != 0 || queries != days*dynamostore.PendingShards {
		t.Fatalf("sweep made %d Scans and %d Queries (%v), want none and %d (%d days × %d shards)", scans, queries, env.Calls, days*dynamostore.PendingShards, days, dynamostore.PendingShards)
	}
	// The capacity check lists the open events with one Query.
	env.Calls.Reset()
	if checked, broken, err := env.Operations.CheckCapacity(ctx, 10); err != nil || checked != 2 || len(broken) != 0 {
		t.Fatalf("capacity check: %d checked, broken %v, %v", checked, broken, err)
	}
	if n := env.Calls.Count("DynamoDB.Scan"); n != 0 {
		t.Fatalf("capacity check made %d Scans (%v), want none", n, env.Calls)
	}
}

// The open events' listing follows the events' lifecycle: an event is
// listed from its creation until it is closed or its draw starts.
func TestOpenEventsFollowTheLifecycle(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "a", 1)
	firstCome(t, env, "b", 1)
	cutoff := time.Now().Add(time.Hour).UnixMilli()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "l", EventType: asyncevent.Lottery,
		LotteryCutoffAt: cutoff, Winners: 1, AnnouncedAt: cutoff}); err != nil {
		t.Fatal(err)
	}
	open := func(et asyncevent.EventType) []string {
		t.Helper()
		var ids []string
		for id, err := range env.Store.OpenEvents(ctx, et) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	if got := open(asyncevent.FirstCome); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("open FIRST_COME events %v, want [a b]", got)
	}
	if got := open(asyncevent.Lottery); !slices.Equal(got, []string{"l"}) {
		t.Fatalf("open LOTTERY events %v, want [l]", got)
	}
	if _, err := env.Admin.CloseEvent(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if got := open(asyncevent.FirstCome); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("open FIRST_COME events after closing a: %v, want [b]", got)
	}
	if err := env.Store.MoveEvent(ctx, asyncevent.EventMove{EventID: "l", From: asyncevent.EventOpen, To: asyncevent.EventDrawing}); err != nil {
		t.Fatal(err)
	}
	if got := open(asyncevent.Lottery); len(got) != 0 {
		t.Fatalf("open LOTTERY events once its draw started: %v, want none", got)
	}
	// A refused move leaves the listing alone.
	var ese *asyncevent.EventStateError
	if err := env.Store.MoveEvent(ctx, asyncevent.EventMove{EventID: "a", From: asyncevent.EventOpen, To: asyncevent.EventClosed}); !errors.As(err, &ese) || ese.Current == nil {
		t.Fatalf("closing a closed event: %v, want an EventStateError with the event", err)
	}
}
