package ddb_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

func TestCreateIsPutIfAbsentAndCarriesTheCurrentItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	if err := reqs.Create(&request{RequestID: "r1", UserID: "alice", Status: received}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	err := reqs.Create(&request{RequestID: "r1", UserID: "mallory", Status: received}).Run(ctx)
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) || !errors.Is(err, ddb.ErrConditionFailed) {
		t.Fatalf("want *ConditionError, got %v", err)
	}
	var cur request
	if err := ce.Decode(&cur); err != nil || cur.UserID != "alice" {
		t.Fatalf("current item user = %q (%v), want alice", cur.UserID, err)
	}
	got, err := reqs.Get(ctx, requestKey("r1"))
	if err != nil || got.UserID != "alice" {
		t.Fatalf("get: %+v %v", got, err)
	}
}

func TestEntityMayNotCarryForeignIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	_, caps := entities(env.Table)
	err := caps.Put(&capacity{EventID: "e1", Remaining: 1, GSI1PK: "USER#x"}).Run(ctx)
	if !errors.Is(err, ddb.ErrIndexNotAllowed) {
		t.Fatalf("want ErrIndexNotAllowed, got %v", err)
	}
	err = caps.Update(capacityKey("e1")).Set("GSI2SK", "x").Run(ctx)
	if !errors.Is(err, ddb.ErrIndexNotAllowed) {
		t.Fatalf("update: want ErrIndexNotAllowed, got %v", err)
	}
	if n := env.Calls.Total(); n != 0 {
		t.Fatalf("rejected writes made %d calls", n)
	}
}

func TestTransitionIsConditionalAndDeclared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	k := requestKey("r1")
	if err := reqs.Create(&request{RequestID: "r1", Status: received}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Not declared: refused before any call.
	env.Calls.Reset()
	if err := ddb.Transition(reqs, k, lifecycle, succeeded, received).Run(ctx); !errors.Is(err, ddb.ErrTransition) {
		t.Fatalf("want ErrTransition, got %v", err)
	}
	if env.Calls.Total() != 0 {
		t.Fatal("an undeclared transition made a call")
	}
	if err := ddb.Transition(reqs, k, lifecycle, queued, received).Set("queuedAt", 5).Run(ctx); err != nil {
		t.Fatal(err)
	}
	// Second time: the status is QUEUED now; the error carries it.
	err := ddb.Transition(reqs, k, lifecycle, queued, received).Run(ctx)
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) {
		t.Fatalf("want *ConditionError, got %v", err)
	}
	var cur request
	if err := ce.Decode(&cur); err != nil {
		t.Fatal(err)
	}
	if cur.Status != queued {
		t.Fatalf("current status %q, want QUEUED", cur.Status)
	}
}

func TestTransactionReasonsNameTheFailingOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, caps := entities(env.Table)
	if err := caps.Put(&capacity{EventID: "e1", Remaining: 0}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	err := env.DB.Transact(ctx,
		reqs.Create(&request{RequestID: "r9", Status: received}).Label("request"),
		caps.Update(capacityKey("e1")).Bounded("capacityRemaining", -1, &zero, nil).Label("seat").Op(),
	)
	var te *ddb.TxError
	if !errors.As(err, &te) {
		t.Fatalf("want *TxError, got %v", err)
	}
	f := te.Failed()
	if f == nil || f.Op != "seat" || f.Index != 1 || f.Code != "ConditionalCheckFailed" {
		t.Fatalf("failed reason = %+v", f)
	}
	var cur capacity
	if err := f.Decode(&cur); err != nil || cur.EventID != "e1" {
		t.Fatalf("reason item = %+v %v", cur, err)
	}
	if _, err := reqs.Get(ctx, requestKey("r9")); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("cancelled transaction wrote the request: %v", err)
	}
}

func TestTransactionRejectsBadInputBeforeCalling(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	ops := make([]*ddb.Op, 101)
	for i := range ops {
		ops[i] = reqs.Put(&request{RequestID: fmt.Sprint(i)})
	}
	if err := env.DB.Transact(ctx, ops...); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("101 ops: want ErrInvalid, got %v", err)
	}
	if err := env.DB.Transact(ctx, reqs.Put(&request{RequestID: "a"}), reqs.Delete(requestKey("a"))); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("same key twice: want ErrInvalid, got %v", err)
	}
	if env.Calls.Total() != 0 {
		t.Fatalf("made %d calls", env.Calls.Total())
	}
}

// 200 goroutines race for 50 seats: exactly 50 win.
func TestBoundedCounterUnderContention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	_, caps := entities(env.Table)
	if err := caps.Put(&capacity{EventID: "e1", Remaining: 50}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	var won, lost atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := caps.Update(capacityKey("e1")).Bounded("capacityRemaining", -1, &zero, nil).Run(ctx)
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, ddb.ErrConditionFailed):
				lost.Add(1)
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 50 || lost.Load() != 150 {
		t.Fatalf("won %d lost %d, want 50/150", won.Load(), lost.Load())
	}
	c, err := caps.GetStrong(ctx, capacityKey("e1"))
	if err != nil || c.Remaining != 0 {
		t.Fatalf("remaining = %+v %v", c, err)
	}
}

// 120 items on a GSI in pages of 25, both directions: no duplicates, no
// gaps, no trailing empty page, one call per page.
func TestPagingOnGSI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	var all []*request
	for i := 0; i < 120; i++ {
		id := fmt.Sprintf("r%03d", i)
		all = append(all, &request{RequestID: id, UserID: "u1", GSI1PK: userPK.Build("u1"), GSI1SK: qatSK.Build(ddb.Millis(int64(1000+i)), id)})
	}
	// Another user's items share the index but not the partition.
	all = append(all, &request{RequestID: "other", GSI1PK: userPK.Build("u2"), GSI1SK: qatSK.Build(ddb.Millis(1), "other")})
	if err := reqs.BatchPut(ctx, all); err != nil {
		t.Fatal(err)
	}
	for _, desc := range []bool{false, true} {
		env.Calls.Reset()
		var ids []string
		cursor := ""
		pages := 0
		for {
			q := reqs.Query("GSI1", userPK.Build("u1")).Limit(25).After(cursor)
			if desc {
				q = q.Desc()
			}
			p, err := q.Page(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(p.Items) == 0 {
				t.Fatalf("desc=%v: empty page %d", desc, pages)
			}
			for _, r := range p.Items {
				ids = append(ids, r.RequestID)
			}
			if p.Cursor == "" {
				break
			}
			cursor = p.Cursor
		}
		if pages != 5 || len(ids) != 120 {
			t.Fatalf("desc=%v: %d pages, %d items", desc, pages, len(ids))
		}
		for i, id := range ids {
			want := i
			if desc {
				want = 119 - i
			}
			if id != fmt.Sprintf("r%03d", want) {
				t.Fatalf("desc=%v: item %d = %s", desc, i, id)
			}
		}
		if n := env.Calls.Count("DynamoDB.Query"); n != pages {
			t.Fatalf("desc=%v: %d Query calls for %d pages", desc, n, pages)
		}
	}
}

func TestCursorIsBoundAndSigned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	for i := 0; i < 3; i++ {
		id := fmt.Sprint(i)
		if err := reqs.Put(&request{RequestID: id, GSI1PK: userPK.Build("u1"), GSI1SK: qatSK.Build(ddb.Millis(int64(i)), id),
			GSI2PK: "EVENT#e", GSI2SK: qatSK.Build(ddb.Millis(int64(i)), id)}).Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p, err := reqs.Query("GSI1", userPK.Build("u1")).Limit(1).Page(ctx)
	if err != nil || p.Cursor == "" {
		t.Fatalf("page: %v %q", err, p.Cursor)
	}
	tampered := []byte(p.Cursor)
	tampered[3] ^= 1
	cases := map[string]*ddb.Query[request]{
		"tampered":          reqs.Query("GSI1", userPK.Build("u1")).Limit(1).After(string(tampered)),
		"truncated":         reqs.Query("GSI1", userPK.Build("u1")).Limit(1).After(p.Cursor[:len(p.Cursor)-4]),
		"garbage":           reqs.Query("GSI1", userPK.Build("u1")).Limit(1).After("not-a-cursor"),
		"other partition":   reqs.Query("GSI1", userPK.Build("u2")).Limit(1).After(p.Cursor),
		"other index":       reqs.Query("GSI2", "EVENT#e").Limit(1).After(p.Cursor),
		"other direction":   reqs.Query("GSI1", userPK.Build("u1")).Desc().Limit(1).After(p.Cursor),
		"other sort key":    reqs.Query("GSI1", userPK.Build("u1")).BeginsWith("QAT#").Limit(1).After(p.Cursor),
		"other tenant view": reqs.In(env.Table.Scope("userId", "x")).Query("GSI1", userPK.Build("u1")).Limit(1).After(p.Cursor),
	}
	for name, q := range cases {
		if _, err := q.Page(ctx); !errors.Is(err, ddb.ErrCursor) {
			t.Errorf("%s: want ErrCursor, got %v", name, err)
		}
	}
	if _, err := reqs.Query("GSI1", userPK.Build("u1")).Limit(1).After(p.Cursor).Page(ctx); err != nil {
		t.Fatalf("genuine cursor rejected: %v", err)
	}
}

func TestBatchGetInRequestOrderWithExactCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	var items []*request
	var keys []ddb.Key
	for i := 0; i < 250; i++ {
		id := fmt.Sprintf("r%d", i)
		if i%50 != 7 { // leave some missing
			items = append(items, &request{RequestID: id})
		}
		keys = append(keys, requestKey(id))
	}
	if err := reqs.BatchPut(ctx, items); err != nil {
		t.Fatal(err)
	}
	if n := env.Calls.Count("DynamoDB.BatchWriteItem"); n != 10 {
		t.Fatalf("BatchPut of %d items: %d calls, want 10", len(items), n)
	}
	env.Calls.Reset()
	got, err := reqs.BatchGet(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if n := env.Calls.Count("DynamoDB.BatchGetItem"); n != 3 {
		t.Fatalf("BatchGet of 250 keys: %d calls, want 3", n)
	}
	for i, r := range got {
		id := fmt.Sprintf("r%d", i)
		if i%50 == 7 {
			if r != nil {
				t.Fatalf("key %d: want missing, got %+v", i, r)
			}
			continue
		}
		if r == nil || r.RequestID != id {
			t.Fatalf("key %d: got %+v, want %s", i, r, id)
		}
	}
}

func TestScopedViewIsolatesTenants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	alice := reqs.In(env.Table.Scope("userId", "alice"))
	bob := reqs.In(env.Table.Scope("userId", "bob"))
	if err := alice.Create(&request{RequestID: "a1", Status: received}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := bob.Create(&request{RequestID: "b1", Status: received, UserID: "alice"}).Run(ctx); !errors.Is(err, ddb.ErrTenant) {
		t.Fatalf("bob writing alice's item: want ErrTenant, got %v", err)
	}
	if _, err := bob.Get(ctx, requestKey("a1")); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("bob reads alice's item: %v", err)
	}
	if err := bob.Update(requestKey("a1")).Set("status", "HACKED").Run(ctx); !errors.Is(err, ddb.ErrConditionFailed) {
		t.Fatalf("bob updates alice's item: %v", err)
	}
	if err := bob.Put(&request{RequestID: "a1"}).Run(ctx); !errors.Is(err, ddb.ErrConditionFailed) {
		t.Fatalf("bob overwrites alice's item: %v", err)
	}
	got, err := bob.BatchGet(ctx, []ddb.Key{requestKey("a1")})
	if err != nil || got[0] != nil {
		t.Fatalf("bob batch-gets alice's item: %+v %v", got, err)
	}
	r, err := alice.Get(ctx, requestKey("a1"))
	if err != nil || r.Status != received || r.UserID != "alice" {
		t.Fatalf("alice's item changed: %+v %v", r, err)
	}
}
