package dynamostore_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
)

// Reading through the narrow GSI2 (requests fetched from the table) gives
// the pages ProjectAllSchema's GSI2 gives (requests and filter in the index):
// same requests, same order, full pages, every request once across pages.
func TestNarrowIndexReadsAsProjectAll(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{ProjectAllIndex: true})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 7,
		ClosesAt: time.Now().Add(time.Hour).UnixMilli(), Ordering: asyncevent.OrderDelivery}); err != nil {
		t.Fatal(err)
	}
	const n = 23
	for i := range n {
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("user-%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 { // every third is decided: 7 win, the rest lose
			body := asyncevent.Message{V: 1, RequestID: p.RequestID, EventID: "ev", UserID: fmt.Sprintf("user-%02d", i), EventType: asyncevent.FirstCome}.Encode()
			if o := env.Worker.Process(ctx, asyncevent.Delivery{Body: body, ReceiveCount: 1, SentAt: time.Now()}); !o.Ack {
				t.Fatalf("process: %+v", o)
			}
		}
	}
	seed := dynamostore.New(env.DDB.DB.Table(env.DDB.Table.Name(), &dynamostore.ProjectAllSchema))
	narrow := dynamostore.New(env.DDB.DB.Table(env.DDB.Table.Name(), &dynamostore.Schema))
	list := func(s *dynamostore.Store, status asyncevent.Status, limit int) [][]string {
		var pages [][]string
		cursor := ""
		for {
			rs, next, err := s.EventRequests(ctx, asyncevent.EventRequestsQuery{EventID: "ev", Status: status, Limit: limit, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range rs {
				if status != "" && r.Status != status {
					t.Fatalf("%s in a page of %s", r.Status, status)
				}
				ids = append(ids, r.RequestID+" "+string(r.Status))
			}
			pages = append(pages, ids)
			if cursor = next; cursor == "" {
				return pages
			}
		}
	}
	for _, c := range []struct {
		status asyncevent.Status
		total  int
	}{{"", n}, {asyncevent.StatusSucceeded, 7}, {asyncevent.StatusQueued, n - 8}} {
		for _, limit := range []int{1, 4, 50} {
			want, got := list(seed, c.status, limit), list(narrow, c.status, limit)
			if !slices.EqualFunc(want, got, slices.Equal) {
				t.Fatalf("status %q, limit %d: narrow pages %v, seed pages %v", c.status, limit, got, want)
			}
			if all := slices.Concat(got...); len(all) != c.total {
				t.Fatalf("status %q, limit %d: %d requests over the pages, want %d", c.status, limit, len(all), c.total)
			}
		}
	}
	var seedAll, narrowAll []string
	for r, err := range seed.AllEventRequests(ctx, "ev") {
		if err != nil {
			t.Fatal(err)
		}
		seedAll = append(seedAll, r.RequestID+string(r.Status)+r.UserID)
	}
	for r, err := range narrow.AllEventRequests(ctx, "ev") {
		if err != nil {
			t.Fatal(err)
		}
		narrowAll = append(narrowAll, r.RequestID+string(r.Status)+r.UserID)
	}
	if len(seedAll) != n || !slices.Equal(seedAll, narrowAll) {
		t.Fatalf("AllEventRequests: narrow %d, seed %d", len(narrowAll), len(seedAll))
	}
}
