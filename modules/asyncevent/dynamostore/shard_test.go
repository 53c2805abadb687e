package dynamostore_test

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
)

// An event created with IndexShards 4 writes each request's GSI2 entry to
// EVENT#<eventId>#<IndexShard(requestId, 4)> and none to the
// one-partition key EVENT#<eventId>; one created with 1 keeps that key
// (docs/asyncevent.md, The table's indexes). Read back, the
// sharded index gives what one partition would: the admin list pages
// newest first with no gap or duplicate, full pages, the status filter,
// one cursor bound to the event; AllEventRequests and UndecidedRequests in
// (queuedAt, requestId) order.
func TestShardedIndexReads(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	for _, e := range []struct {
		id     string
		shards int
	}{{"sh", 4}, {"sh2", 4}, {"one", 1}} {
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: e.id, EventType: asyncevent.FirstCome, Capacity: 7,
			ClosesAt: time.Now().Add(time.Hour).UnixMilli(), Ordering: asyncevent.OrderDelivery, IndexShards: e.shards}); err != nil {
			t.Fatal(err)
		}
	}
	participate := func(event string, n int, decide bool) []string {
		var ids []string
		for i := range n {
			user := fmt.Sprintf("user-%02d", i)
			p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: event, UserID: user})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.RequestID)
			if decide && i%3 == 0 { // every third is decided: 7 win, the rest lose
				body := asyncevent.Message{V: 1, RequestID: p.RequestID, EventID: event, UserID: user, EventType: asyncevent.FirstCome}.Encode()
				if o := env.Worker.Process(ctx, asyncevent.Delivery{Body: body, ReceiveCount: 1, SentAt: time.Now()}); !o.Ack {
					t.Fatalf("process: %+v", o)
				}
			}
		}
		return ids
	}
	const n = 60
	ids := participate("sh", n, true)
	participate("sh2", 3, false)
	oneIDs := participate("one", 3, false)

	// Where the entries are.
	partition := func(pk string) []string {
		var out []string
		for it, err := range env.DDB.Table.Query("GSI2", pk).All(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			id, ok := (*it)["requestId"].(*types.AttributeValueMemberS)
			if !ok {
				t.Fatalf("index entry without a requestId: %v", it)
			}
			out = append(out, id.Value)
		}
		return out
	}
	if got := partition("EVENT#sh"); len(got) != 0 {
		t.Fatalf("the one-partition key EVENT#sh holds %d entries of a sharded event", len(got))
	}
	total := 0
	for shard := range 4 {
		got := partition(fmt.Sprintf("EVENT#sh#%d", shard))
		if len(got) == 0 {
			t.Errorf("shard %d holds no entry of %d", shard, n)
		}
		for _, id := range got {
			if dynamostore.IndexShard(id, 4) != shard {
				t.Errorf("request %s on shard %d, its hash says %d", id, shard, dynamostore.IndexShard(id, 4))
			}
		}
		total += len(got)
	}
	if total != n {
		t.Fatalf("%d entries over the shards, want %d", total, n)
	}
	if got := partition("EVENT#one"); !sameSet(got, oneIDs) {
		t.Fatalf("IndexShards 1: EVENT#one holds %v, want %v (the one-partition key)", got, oneIDs)
	}

	// What a single partition would give: by (queuedAt, requestId).
	var all []*asyncevent.Request
	for _, id := range ids {
		r, err := env.Store.GetRequest(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b *asyncevent.Request) int {
		return cmp.Or(cmp.Compare(a.QueuedAt, b.QueuedAt), cmp.Compare(a.RequestID, b.RequestID))
	})
	keys := func(rs []*asyncevent.Request, keep func(*asyncevent.Request) bool) []string {
		var out []string
		for _, r := range rs {
			if keep(r) {
				out = append(out, r.RequestID+" "+string(r.Status))
			}
		}
		return out
	}
	newest := slices.Clone(all)
	slices.Reverse(newest)

	for _, status := range []asyncevent.Status{"", asyncevent.StatusSucceeded, asyncevent.StatusQueued} {
		want := keys(newest, func(r *asyncevent.Request) bool { return status == "" || r.Status == status })
		for _, limit := range []int{1, 7, 50} {
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				rs, next, err := env.Store.EventRequests(ctx, asyncevent.EventRequestsQuery{EventID: "sh", Status: status, Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if next != "" && len(rs) != limit {
					t.Fatalf("status %q, limit %d, page %d: %d requests and a cursor, want a full page", status, limit, pages, len(rs))
				}
				got = append(got, keys(rs, func(*asyncevent.Request) bool { return true })...)
				if cursor = next; cursor == "" {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("status %q, limit %d: pages give %d requests %v, want %d %v", status, limit, len(got), got, len(want), want)
			}
		}
	}

	// The cursor is bound to the event (and to its shards).
	_, cursor, err := env.Store.EventRequests(ctx, asyncevent.EventRequestsQuery{EventID: "sh", Limit: 5})
	if err != nil || cursor == "" {
		t.Fatalf("first page: cursor %q, %v", cursor, err)
	}
	for _, other := range []string{"sh2", "one"} {
		if _, _, err := env.Store.EventRequests(ctx, asyncevent.EventRequestsQuery{EventID: other, Limit: 5, Cursor: cursor}); !errors.Is(err, asyncevent.ErrCursor) {
			t.Errorf("a cursor of sh used on %s: %v, want ErrCursor", other, err)
		}
	}

	read := func(seq func(func(*asyncevent.Request, error) bool)) []string {
		var out []string
		for r, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.RequestID+" "+string(r.Status))
		}
		return out
	}
	// A fresh Store learns the event's shards from its config.
	fresh := dynamostore.New(env.DDB.DB.Table(env.DDB.Table.Name(), &dynamostore.Schema))
	if got, want := read(fresh.AllEventRequests(ctx, "sh")), keys(all, func(*asyncevent.Request) bool { return true }); !slices.Equal(got, want) {
		t.Fatalf("AllEventRequests: %v, want %v", got, want)
	}
	undecided := keys(all, func(r *asyncevent.Request) bool {
		return r.Status == asyncevent.StatusQueued || r.Status == asyncevent.StatusProcessing
	})
	if got := read(fresh.UndecidedRequests(ctx, "sh", 0, time.Now().Add(time.Minute).UnixMilli())); !slices.Equal(got, undecided) {
		t.Fatalf("UndecidedRequests: %v, want %v", got, undecided)
	}
	// Bounded by queuedAt: from the 11th request's queuedAt on.
	from := all[10].QueuedAt
	var later []string
	for _, r := range all {
		if r.QueuedAt >= from && (r.Status == asyncevent.StatusQueued || r.Status == asyncevent.StatusProcessing) {
			later = append(later, r.RequestID+" "+string(r.Status))
		}
	}
	if got := read(fresh.UndecidedRequests(ctx, "sh", from, time.Now().Add(time.Minute).UnixMilli())); !slices.Equal(got, later) {
		t.Fatalf("UndecidedRequests from %d: %v, want %v", from, got, later)
	}
}

// The merge orders by (queuedAt, requestId), not by request id alone:
// requests whose ids run against their queuedAt, with ties on queuedAt,
// come back in GSI2 order from every reader of a sharded index.
func TestShardedIndexOrdersByQueuedAt(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "mix", EventType: asyncevent.FirstCome, Capacity: 7,
		ClosesAt: time.Now().Add(time.Hour).UnixMilli(), IndexShards: 4}); err != nil {
		t.Fatal(err)
	}
	base := time.Now().UnixMilli()
	var want []string
	type pos struct {
		at int64
		id string
	}
	var ps []pos
	for i := range 40 {
		r := &asyncevent.Request{RequestID: fmt.Sprintf("r%02d", i), EventID: "mix", UserID: fmt.Sprintf("u%02d", i),
			EventType: asyncevent.FirstCome, Status: asyncevent.StatusReceived, UIResult: asyncevent.ResultPending, RequestedAt: base - 1000}
		if _, _, err := env.Store.CreateRequest(ctx, r, 0); err != nil {
			t.Fatal(err)
		}
		at := base - int64((i*7)%13) // against the ids' order, with ties
		if err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: r.RequestID, EventID: "mix", UserID: r.UserID,
			From: []asyncevent.Status{asyncevent.StatusReceived}, To: asyncevent.StatusQueued, At: base + 1, QueuedAt: at, IndexShards: 4}); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, pos{at, r.RequestID})
	}
	slices.SortFunc(ps, func(a, b pos) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.id, b.id)) })
	for _, p := range ps {
		want = append(want, p.id)
	}
	var got []string
	for r, err := range env.Store.UndecidedRequests(ctx, "mix", 0, base+10) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.RequestID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("UndecidedRequests: %v, want %v", got, want)
	}
	got = got[:0]
	for cursor := ""; ; {
		rs, next, err := env.Store.EventRequests(ctx, asyncevent.EventRequestsQuery{EventID: "mix", Limit: 6, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			got = append(got, r.RequestID)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("admin list: %v, want %v", got, want)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
