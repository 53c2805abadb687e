package ddb_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// newestFirst orders log entries by time, newest first.
func newestFirst(a, b *logEntry) int { return cmp.Compare(b.At, a.At) }

// seedStreams writes log entries into partitions by time: e1 holds times
// ≡ 0 (mod 3) up to 60, e2 ≡ 1 up to 40, e3 the single time 50 (so their
// times interleave), e4 nothing. It returns each partition's times.
func seedStreams(t *testing.T, env *ddbtest.Env) (*ddb.Entity[logEntry], map[string][]int64) {
	t.Helper()
	logs := ddb.NewEntity(env.Table, "LOG", func(l *logEntry) ddb.Key { return logKey(l.EventID, l.At) })
	times := map[string][]int64{}
	var all []*logEntry
	add := func(ev string, at int64) {
		times[ev] = append(times[ev], at)
		all = append(all, &logEntry{EventID: ev, At: at, Kind: "A", OrgID: "acme"})
	}
	for at := int64(1); at <= 60; at++ {
		switch {
		case at%3 == 0:
			add("e1", at)
		case at%3 == 1 && at <= 40:
			add("e2", at)
		}
	}
	add("e3", 50)
	if err := logs.BatchPut(context.Background(), all); err != nil {
		t.Fatal(err)
	}
	env.Calls.Reset()
	return logs, times
}

func mergeOf(logs *ddb.Entity[logEntry], events ...string) *ddb.Merge[logEntry] {
	qs := make([]*ddb.Query[logEntry], len(events))
	for i, ev := range events {
		qs[i] = logs.Query("", capPK.Build(ev)).BeginsWith("LOG#").Desc()
	}
	return ddb.NewMerge(newestFirst, qs...)
}

// A merge returns every item of every stream once, in one order across
// pages, with no trailing empty page; each page costs one Query per
// stream that still has items (all of them on the first page).
func TestMergeInterleavesStreamsAcrossPages(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t, &schema)
	logs, times := seedStreams(t, env)
	events := []string{"e1", "e2", "e3", "e4"}
	var want []int64
	for _, ev := range events {
		want = append(want, times[ev]...)
	}
	slices.Sort(want)
	slices.Reverse(want)
	for _, limit := range []int{1, 2, 7, 20, len(want), len(want) + 1, 1000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			var got []int64
			cursor := ""
			for page := 0; ; page++ {
				if page > len(want) {
					t.Fatal("no end")
				}
				left := 0 // streams with items not yet returned
				for _, ev := range events {
					if page == 0 || slices.ContainsFunc(times[ev], func(at int64) bool { return !slices.Contains(got, at) }) {
						left++
					}
				}
				env.Calls.Reset()
				p, err := mergeOf(logs, events...).Limit(limit).After(cursor).Page(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if q := env.Calls.Count("DynamoDB.Query"); q != left || p.Calls != left || env.Calls.Total() != left {
					t.Fatalf("page %d: %s (Page says %d), want one Query per stream with items left: %d", page, env.Calls, p.Calls, left)
				}
				if len(p.Items) == 0 || len(p.Items) > limit {
					t.Fatalf("page %d: %d items with limit %d", page, len(p.Items), limit)
				}
				for _, it := range p.Items {
					got = append(got, it.At)
				}
				if cursor = p.Cursor; cursor == "" {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
		})
	}
}

// All reads what paging by hand reads, with the same calls: every item
// once, in order, from After's cursor if set; stopping early stops
// reading, and an error ends the iteration.
func TestMergeAll(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t, &schema)
	logs, times := seedStreams(t, env)
	ctx := context.Background()
	events := []string{"e1", "e2", "e3", "e4"}
	// byHand pages through the merge from cursor, up to pages pages (0: all),
	// and returns the times read and the Query calls made.
	byHand := func(limit int, cursor string, pages int) ([]int64, int) {
		var got []int64
		calls := 0
		for n := 1; ; n++ {
			p, err := mergeOf(logs, events...).Limit(limit).After(cursor).Page(ctx)
			if err != nil {
				t.Fatal(err)
			}
			calls += p.Calls
			for _, it := range p.Items {
				got = append(got, it.At)
			}
			if cursor = p.Cursor; cursor == "" || n == pages {
				return got, calls
			}
		}
	}
	var all []int64
	for _, ev := range events {
		all = append(all, times[ev]...)
	}
	slices.Sort(all)
	slices.Reverse(all)
	for _, limit := range []int{1, 7, 1000} {
		want, wantCalls := byHand(limit, "", 0)
		if !slices.Equal(want, all) {
			t.Fatalf("limit %d: paging by hand read %v", limit, want)
		}
		env.Calls.Reset()
		var got []int64
		for it, err := range mergeOf(logs, events...).Limit(limit).All(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, it.At)
		}
		if !slices.Equal(got, want) || env.Calls.Count("DynamoDB.Query") != wantCalls {
			t.Fatalf("limit %d: All read %v with %s\nwant %v with %d Query calls", limit, got, env.Calls, want, wantCalls)
		}
	}

	// From a cursor: the rest.
	first, err := mergeOf(logs, events...).Limit(7).Page(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rest []int64
	for it, err := range mergeOf(logs, events...).Limit(7).After(first.Cursor).All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		rest = append(rest, it.At)
	}
	if !slices.Equal(rest, all[7:]) {
		t.Fatalf("All after the first page read %v, want %v", rest, all[7:])
	}

	// Stopping in the second page reads two pages.
	_, twoPages := byHand(2, "", 2)
	env.Calls.Reset()
	n := 0
	for _, err := range mergeOf(logs, events...).Limit(2).All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	if c := env.Calls.Count("DynamoDB.Query"); c != twoPages {
		t.Fatalf("breaking after 3 items made %d Query calls, want %d (two pages)", c, twoPages)
	}

	errs := 0
	for _, err := range mergeOf(logs, events...).After("forged").All(ctx) {
		if !errors.Is(err, ddb.ErrCursor) {
			t.Fatalf("want ErrCursor, got %v", err)
		}
		errs++
	}
	if errs != 1 {
		t.Fatalf("%d errors yielded, want 1", errs)
	}
}

// A merge cursor works only for the merge it came from: not for other
// streams, another tenant, another order, a Query, or altered; and a
// Query's cursor is not a merge's.
func TestMergeCursorIsBoundToItsStreams(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t, &schema)
	logs, _ := seedStreams(t, env)
	ctx := context.Background()
	p, err := mergeOf(logs, "e1", "e2").Limit(3).Page(ctx)
	if err != nil || p.Cursor == "" {
		t.Fatalf("first page: %v, cursor %q", err, p.Cursor)
	}
	if _, err := mergeOf(logs, "e1", "e2").Limit(3).After(p.Cursor).Page(ctx); err != nil {
		t.Fatalf("genuine cursor: %v", err)
	}
	acme, globex := logs.In(env.Table.Scope("orgId", "acme")), logs.In(env.Table.Scope("orgId", "globex"))
	scoped, err := mergeOf(acme, "e1", "e2").Limit(3).Page(ctx)
	if err != nil || scoped.Cursor == "" {
		t.Fatalf("scoped first page: %v", err)
	}
	qp, err := logs.Query("", capPK.Build("e1")).Desc().Limit(3).Page(ctx)
	if err != nil {
		t.Fatal(err)
	}
	altered := []byte(p.Cursor)
	altered[len(altered)/2] ^= 1
	asc := ddb.NewMerge(newestFirst,
		logs.Query("", capPK.Build("e1")).BeginsWith("LOG#"),
		logs.Query("", capPK.Build("e2")).BeginsWith("LOG#").Desc())
	for name, m := range map[string]*ddb.Merge[logEntry]{
		"other stream":           mergeOf(logs, "e1", "e3").After(p.Cursor),
		"streams swapped":        mergeOf(logs, "e2", "e1").After(p.Cursor),
		"one stream more":        mergeOf(logs, "e1", "e2", "e3").After(p.Cursor),
		"other tenant":           mergeOf(globex, "e1", "e2").After(scoped.Cursor),
		"unscoped":               mergeOf(logs, "e1", "e2").After(scoped.Cursor),
		"other direction":        asc.After(p.Cursor),
		"a query's cursor":       mergeOf(logs, "e1", "e2").After(qp.Cursor),
		"altered":                mergeOf(logs, "e1", "e2").After(string(altered)),
		"too long":               mergeOf(logs, "e1", "e2").After(p.Cursor + string(make([]byte, ddb.MaxMergeCursorLen))),
		"not base64url":          mergeOf(logs, "e1", "e2").After(p.Cursor[:10] + "!" + p.Cursor[11:]),
		"other tenant, scoped 2": mergeOf(acme, "e1", "e2").After(p.Cursor),
	} {
		if _, err := m.Limit(3).Page(ctx); !errors.Is(err, ddb.ErrCursor) {
			t.Errorf("%s: %v, want ErrCursor", name, err)
		}
	}
	if _, err := logs.Query("", capPK.Build("e1")).Desc().Limit(3).After(p.Cursor).Page(ctx); !errors.Is(err, ddb.ErrCursor) {
		t.Errorf("a merge's cursor on a query: %v, want ErrCursor", err)
	}
}

// A merge refuses what would break its bounds.
func TestMergeRefusesBadSetups(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t, &schema)
	logs := ddb.NewEntity(env.Table, "LOG", func(l *logEntry) ddb.Key { return logKey(l.EventID, l.At) })
	many := make([]string, ddb.MaxMergeStreams+1)
	for i := range many {
		many[i] = fmt.Sprint("e", i)
	}
	for name, m := range map[string]*ddb.Merge[logEntry]{
		"too many streams": mergeOf(logs, many...),
		"limit 0":          mergeOf(logs, "e1").Limit(0),
		"no order":         ddb.NewMerge(nil, logs.Query("", capPK.Build("e1"))),
	} {
		if _, err := m.Page(context.Background()); !errors.Is(err, ddb.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if env.Calls.Total() != 0 {
		t.Errorf("refused merges made calls: %s", env.Calls)
	}
}

type exampleShot struct {
	Camera string `dynamodbav:"camera"`
	At     string `dynamodbav:"at"`
}

// Two cameras' shots, each partition sorted by time, read as one timeline,
// newest first, two at a time.
func ExampleMerge() {
	ctx := context.Background()
	table := exampleTable(ctx, &exampleSchema)
	shotPK, shotSK := ddb.MustFormat("CAMERA#{camera}"), ddb.MustFormat("AT#{at}")
	shots := ddb.NewEntity(table, "SHOT", func(s *exampleShot) ddb.Key {
		return ddb.Key{PK: shotPK.Build(s.Camera), SK: shotSK.Build(s.At)}
	})
	for _, s := range []exampleShot{{"a", "10:00"}, {"b", "10:01"}, {"a", "10:02"}, {"a", "10:03"}, {"b", "10:04"}} {
		if err := shots.Put(&s).Run(ctx); err != nil {
			panic(err)
		}
	}
	newest := func(x, y *exampleShot) int { return cmp.Compare(y.At, x.At) }
	merge := func() *ddb.Merge[exampleShot] {
		return ddb.NewMerge(newest,
			shots.Query("", shotPK.Build("a")).Desc(),
			shots.Query("", shotPK.Build("b")).Desc()).Limit(2)
	}
	cursor := ""
	for {
		p, err := merge().After(cursor).Page(ctx)
		if err != nil {
			panic(err)
		}
		for _, s := range p.Items {
			fmt.Print(s.Camera, " ", s.At, "; ")
		}
		fmt.Println("queries:", p.Calls)
		if cursor = p.Cursor; cursor == "" {
			break
		}
	}
	// Output:
	// b 10:04; a 10:03; queries: 2
	// a 10:02; b 10:01; queries: 2
	// a 10:00; queries: 1
}
