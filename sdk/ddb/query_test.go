package ddb_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

var logSK = ddb.MustFormat("LOG#{occurredAt}")

// logEntry is a StatusLog-like item: many per partition, sorted by time.
type logEntry struct {
	EventID string `dynamodbav:"eventId"`
	At      int64  `dynamodbav:"occurredAt"`
	Kind    string `dynamodbav:"kind"`
	OrgID   string `dynamodbav:"orgId,omitempty"`
}

func logKey(ev string, at int64) ddb.Key {
	return ddb.Key{PK: capPK.Build(ev), SK: logSK.Build(ddb.Millis(at))}
}

// seedLogs writes n log entries at times 1..n in partition EVENT#e1 (every
// fourth of kind "A", the others "B", tenants alternating acme/globex), plus
// a CONFIG item in the same partition. It returns the log entity.
func seedLogs(t *testing.T, env *ddbtest.Env, n int) *ddb.Entity[logEntry] {
	t.Helper()
	logs := ddb.NewEntity(env.Table, "LOG", func(l *logEntry) ddb.Key { return logKey(l.EventID, l.At) })
	var all []*logEntry
	for i := 1; i <= n; i++ {
		kind, org := "B", "globex"
		if i%4 == 0 {
			kind = "A"
		}
		if i%2 == 0 {
			org = "acme"
		}
		all = append(all, &logEntry{EventID: "e1", At: int64(i), Kind: kind, OrgID: org})
	}
	if err := logs.BatchPut(context.Background(), all); err != nil {
		t.Fatal(err)
	}
	if err := env.Table.PutItem(ddb.Item{
		"PK": &types.AttributeValueMemberS{Value: capPK.Build("e1")}, "SK": &types.AttributeValueMemberS{Value: "CONFIG"},
	}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	env.Calls.Reset()
	return logs
}

func times(ls []*logEntry) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.At
	}
	return out
}

func span(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestQuerySortKeyConditions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	logs := seedLogs(t, env, 20)
	pk := capPK.Build("e1")
	at := func(n int64) string { return logSK.Build(ddb.Millis(n)) }
	cases := []struct {
		name string
		q    *ddb.Query[logEntry]
		want []int64
	}{
		{"begins_with", logs.Query("", pk).BeginsWith(logSK.Prefix()), span(1, 20)},
		{"between", logs.Query("", pk).Between(at(5), at(8)), span(5, 8)},
		{"=", logs.Query("", pk).SortKey("=", at(7)), []int64{7}},
		{"<", logs.Query("", pk).SortKey("<", at(3)), []int64{0, 1, 2}}, // "CONFIG" < "LOG#…": a zero entry
		{"<=", logs.Query("", pk).SortKey("<=", at(3)), []int64{0, 1, 2, 3}},
		{">", logs.Query("", pk).SortKey(">", at(18)), span(19, 20)},
		{">=", logs.Query("", pk).SortKey(">=", at(18)), span(18, 20)},
		{"last sort-key condition wins", logs.Query("", pk).SortKey("<", at(3)).BeginsWith("LOG#"), span(1, 20)},
		{"desc between", logs.Query("", pk).Between(at(5), at(8)).Desc(), []int64{8, 7, 6, 5}},
	}
	for _, c := range cases {
		p, err := c.q.Page(ctx)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := times(p.Items); fmt.Sprint(got) != fmt.Sprint(c.want) || p.Cursor != "" || p.Calls != 1 {
			t.Errorf("%s: got %v (cursor %q, %d calls), want %v", c.name, got, p.Cursor, p.Calls, c.want)
		}
	}
	for name, q := range map[string]*ddb.Query[logEntry]{
		"bad operator":   logs.Query("", pk).SortKey("!=", at(1)),
		"limit 0..1000":  logs.Query("", pk).Limit(1001),
		"negative limit": logs.Query("", pk).Limit(-1),
		"unknown index":  logs.Query("GSI9", pk),
	} {
		if _, err := q.Page(ctx); err == nil {
			t.Errorf("%s: want error", name)
		} else if name != "unknown index" && !errors.Is(err, ddb.ErrInvalid) {
			t.Errorf("%s: want ErrInvalid, got %v", name, err)
		}
	}
	if n := env.Calls.Count("DynamoDB.Query"); n != len(cases) {
		t.Fatalf("%d Query calls for %d queries (rejected ones must not call)", n, len(cases))
	}
}

// A filtered page reads until it is full, and the last page still has no
// cursor and is never empty.
func TestQueryFilterFillsPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	logs := seedLogs(t, env, 40) // kind A: 4, 8, ..., 40
	for _, desc := range []bool{false, true} {
		var got []int64
		cursor := ""
		var pages, calls int
		for {
			q := logs.Query("", capPK.Build("e1")).BeginsWith("LOG#").
				Filter(expression.Name("kind").Equal(expression.Value("A"))).Limit(3).After(cursor)
			if desc {
				q = q.Desc()
			}
			p, err := q.Page(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			calls += p.Calls
			if len(p.Items) == 0 {
				t.Fatalf("desc=%v: empty page %d", desc, pages)
			}
			if p.Calls != 1 {
				t.Errorf("desc=%v: page %d took %d calls; a filtered call reads at least 100 items, all 40 here", desc, pages, p.Calls)
			}
			got = append(got, times(p.Items)...)
			if p.Cursor == "" {
				break
			}
			cursor = p.Cursor
		}
		want := []int64{4, 8, 12, 16, 20, 24, 28, 32, 36, 40}
		if desc {
			want = []int64{40, 36, 32, 28, 24, 20, 16, 12, 8, 4}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || pages != 4 {
			t.Fatalf("desc=%v: %d pages %v, want 4 pages %v", desc, pages, got, want)
		}
		if n := env.Calls.Count("DynamoDB.Query"); n != calls {
			t.Fatalf("pages report %d calls, counter saw %d", calls, n)
		}
		env.Calls.Reset()
	}
}

func TestQueryAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	logs := seedLogs(t, env, 40)
	q := logs.Query("", capPK.Build("e1")).BeginsWith("LOG#").Limit(7)
	var got []int64
	for l, err := range q.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.At)
	}
	if fmt.Sprint(got) != fmt.Sprint(span(1, 40)) {
		t.Fatalf("All = %v", got)
	}
	if n := env.Calls.Count("DynamoDB.Query"); n != 6 { // 7+7+7+7+7+5
		t.Fatalf("%d Query calls, want 6", n)
	}

	// Stopping early stops reading.
	env.Calls.Reset()
	n := 0
	for _, err := range q.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 10 {
			break
		}
	}
	if c := env.Calls.Count("DynamoDB.Query"); c != 2 {
		t.Fatalf("breaking after 10 items made %d calls, want 2", c)
	}

	// Without a limit All still pages; errors end the iteration.
	got = got[:0]
	for l, err := range logs.Query("", capPK.Build("e1")).Desc().All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.At)
	}
	if len(got) != 41 { // 40 logs and CONFIG (decoded as a zero log entry)
		t.Fatalf("All without limit: %d items", len(got))
	}
	var errs int
	for _, err := range logs.Query("", capPK.Build("e1")).Limit(5).After("forged").All(ctx) {
		if !errors.Is(err, ddb.ErrCursor) {
			t.Fatalf("want ErrCursor, got %v", err)
		}
		errs++
	}
	if errs != 1 {
		t.Fatalf("%d errors yielded, want 1", errs)
	}
}

// A scoped view's query skips other tenants' items in the partition, fills
// its pages anyway, and its cursors do not work in another tenant's view.
func TestScopedQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	logs := seedLogs(t, env, 30) // acme has the even times
	acme := logs.In(env.Table.Scope("orgId", "acme"))
	globex := logs.In(env.Table.Scope("orgId", "globex"))
	var got []int64
	cursor := ""
	var first string
	for {
		p, err := acme.Query("", capPK.Build("e1")).BeginsWith("LOG#").Limit(4).After(cursor).Page(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) == 0 {
			t.Fatal("empty page")
		}
		for _, l := range p.Items {
			if l.OrgID != "acme" {
				t.Fatalf("acme's query returned %+v", l)
			}
		}
		got = append(got, times(p.Items)...)
		if first == "" {
			first = p.Cursor
		}
		if p.Cursor == "" {
			break
		}
		cursor = p.Cursor
	}
	var want []int64
	for i := int64(2); i <= 30; i += 2 {
		want = append(want, i)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("acme sees %v, want %v", got, want)
	}
	if _, err := globex.Query("", capPK.Build("e1")).BeginsWith("LOG#").Limit(4).After(first).Page(ctx); !errors.Is(err, ddb.ErrCursor) {
		t.Fatalf("globex used acme's cursor: %v", err)
	}
	if _, err := logs.Query("", capPK.Build("e1")).BeginsWith("LOG#").Limit(4).After(first).Page(ctx); !errors.Is(err, ddb.ErrCursor) {
		t.Fatalf("the unscoped table used acme's cursor: %v", err)
	}
	n := 0
	for l, err := range globex.Query("", capPK.Build("e1")).All(ctx) {
		if err != nil || l.OrgID != "globex" {
			t.Fatalf("globex All: %+v %v", l, err)
		}
		n++
	}
	if n != 15 {
		t.Fatalf("globex sees %d items, want 15", n)
	}
}

// A filter that matches little of a large partition does not read all of it
// in one page: after MaxFilteredCalls calls the page returns what matched so
// far (here nothing) with a cursor, and the next page goes on from there.
func TestQuerySparseFilterIsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	n := ddb.MaxFilteredCalls*100 + 50
	logs := seedLogs(t, env, n)
	last := int64(n)
	f := expression.Name("occurredAt").Equal(expression.Value(last))
	var got []int64
	cursor := ""
	var pages []int
	for {
		p, err := logs.Query("", capPK.Build("e1")).BeginsWith("LOG#").Filter(f).Limit(5).After(cursor).Page(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p.Calls > ddb.MaxFilteredCalls {
			t.Fatalf("a page made %d calls", p.Calls)
		}
		pages = append(pages, len(p.Items))
		got = append(got, times(p.Items)...)
		if p.Cursor == "" {
			break
		}
		cursor = p.Cursor
	}
	if fmt.Sprint(got) != fmt.Sprint([]int64{last}) || len(pages) != 2 || pages[0] != 0 {
		t.Fatalf("got %v over pages %v, want [%d] on the second of 2 pages", got, pages, last)
	}
}

// consistencyClient records whether each Query asked for a consistent read.
type consistencyClient struct {
	ddb.Client
	mu     sync.Mutex
	strong []bool
}

func (c *consistencyClient) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.mu.Lock()
	c.strong = append(c.strong, aws.ToBool(in.ConsistentRead))
	c.mu.Unlock()
	return c.Client.Query(ctx, in, opts...)
}

// Consistent asks DynamoDB for strongly consistent pages on the base table
// and is refused, before any call, on a GSI (which cannot give them).
func TestQueryConsistent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	seedLogs(t, env, 5)
	c := &consistencyClient{Client: env.Client}
	db := ddb.New(c, ddb.Config{CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")})
	table := db.Table(env.Table.Name(), &schema)
	for _, strong := range []bool{false, true} {
		q := table.Query("", capPK.Build("e1")).BeginsWith("LOG#").Limit(2)
		if strong {
			q = q.Consistent()
		}
		n := 0
		for _, err := range q.All(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 5 {
			t.Fatalf("consistent=%v: %d items, want 5", strong, n)
		}
	}
	if got := fmt.Sprint(c.strong); got != "[false false false true true true]" {
		t.Fatalf("ConsistentRead per call: %s", got)
	}
	c.strong = nil
	if _, err := table.Query("GSI1", "x").Consistent().Page(ctx); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("consistent GSI query: %v, want ErrInvalid", err)
	}
	if len(c.strong) != 0 {
		t.Fatalf("a refused query made %d calls", len(c.strong))
	}
}
