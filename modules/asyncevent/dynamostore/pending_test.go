package dynamostore_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// TestPendingListPages pages through an event's not-queued requests, a
// dozen to a shard of the pending index, at several page sizes, with and
// without a status filter (failed enqueues are rare here, so a shard's
// first entries are often all filtered out): each page merges the event's
// shards, and where a shard has more than the page reads, only what is
// newer than its last entry is taken and the next round reads on from
// there. Every request comes exactly once, newest requestedAt first, and
// another event's requests never.
func TestPendingListPages(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	for _, id := range []string{"ev", "ev2"} {
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: id, EventType: asyncevent.FirstCome, Capacity: 1,
			ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UnixMilli()
	var all []*asyncevent.Request
	for i := range 110 {
		event := "ev"
		if i%9 == 4 {
			event = "ev2"
		}
		// Several requests share a millisecond: the order is then the ids'.
		at := now + int64(i/3)
		r := &asyncevent.Request{RequestID: ulid.MustNew(uint64(at), ulid.DefaultEntropy()).String(), EventID: event,
			UserID: fmt.Sprintf("u%02d", i), EventType: asyncevent.FirstCome, Status: asyncevent.StatusReceived,
			UIResult: asyncevent.ResultPending, RequestedAt: at}
		if _, _, err := env.Store.CreateRequest(ctx, r, 0); err != nil {
			t.Fatal(err)
		}
		if i%7 == 0 { // its enqueue failed
			tr := &asyncevent.Transition{RequestID: r.RequestID, EventID: event, UserID: r.UserID, From: []asyncevent.Status{asyncevent.StatusReceived},
				To: asyncevent.StatusFailedFinal, At: at + 100, FinishedAt: at + 100, ResultCode: asyncevent.CodeFailedIngestEnqueue,
				UIResult: asyncevent.ResultFailed, FailureClass: asyncevent.Retryable}
			if err := env.Store.Transition(ctx, tr); err != nil {
				t.Fatal(err)
			}
			r.Status = asyncevent.StatusFailedFinal
		}
		if event == "ev" {
			all = append(all, r)
		}
	}
	slices.SortFunc(all, func(a, b *asyncevent.Request) int {
		return cmp.Or(cmp.Compare(b.RequestedAt, a.RequestedAt), cmp.Compare(b.RequestID, a.RequestID))
	})
	for _, c := range []struct {
		status asyncevent.Status
		limits []int
	}{{"", []int{3, 7}}, {asyncevent.StatusReceived, []int{5}}, {asyncevent.StatusFailedFinal, []int{1, 2}}} {
		status := c.status
		var want []string
		for _, r := range all {
			if status == "" || r.Status == status {
				want = append(want, r.RequestID)
			}
		}
		for _, limit := range c.limits {
			var got []string
			cursor := ""
			for page := 0; ; page++ {
				rs, next, err := env.Store.EventRequests(ctx, asyncevent.EventRequestsQuery{EventID: "ev", Status: status, Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatalf("status %q limit %d page %d: %v", status, limit, page, err)
				}
				if len(rs) > limit || (len(rs) == 0 && next != "") {
					t.Fatalf("status %q limit %d page %d: %d requests, cursor %q", status, limit, page, len(rs), next)
				}
				for _, r := range rs {
					got = append(got, r.RequestID)
				}
				if cursor = next; cursor == "" {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("status %q limit %d: listed %d requests %v,\nwant %d %v", status, limit, len(got), got, len(want), want)
			}
		}
	}
}
