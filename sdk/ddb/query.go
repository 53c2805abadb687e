package ddb

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxPageSize bounds Query.Limit.
const MaxPageSize = 1000

// MaxFilteredCalls bounds the Query calls one page of a filtered query may
// make. A filter that matches little of a large partition would otherwise
// read all of it in one page: after this many calls the page returns what
// matched so far (possibly nothing) with a cursor to go on.
const MaxFilteredCalls = 10

// filteredReadSize is the least a filtered query asks DynamoDB to read per
// call.
const filteredReadSize = 100

// Page is one page of query results. Cursor is empty on the last page:
// there is never an empty page with a cursor, except for a filtered query
// whose filter matched nothing in MaxFilteredCalls calls.
type Page[T any] struct {
	Items  []*T
	Cursor string
	// Calls is how many Query calls the page took (1 unless a filter or
	// DynamoDB's 1 MB limit made the SDK fetch more to fill it).
	Calls int
}

// Query is a query on the base table or a GSI, in one partition. Build it
// with Entity.Query or Table.Query, refine it with its methods, and read it
// with Page or All.
type Query[T any] struct {
	table  *Table
	index  string
	pkAttr string
	skAttr string
	pk     string
	sk     *expression.KeyConditionBuilder
	skDesc string // the sort-key condition, for binding cursors to it
	filter *expression.ConditionBuilder
	desc   bool
	strong bool
	limit  int
	cursor string
	decode func(Item) (*T, error)
	err    error
}

func newQuery[T any](t *Table, index, pk string, decode func(Item) (*T, error)) *Query[T] {
	q := &Query[T]{table: t, index: index, pk: pk, decode: decode}
	q.pkAttr, q.skAttr, q.err = t.schema.keyAttrs(index)
	return q
}

// Query starts a raw query on index ("" for the base table) in partition pk.
func (t *Table) Query(index, pk string) *Query[Item] {
	return newQuery(t, index, pk, func(it Item) (*Item, error) { return &it, nil })
}

func (q *Query[T]) skName() expression.KeyBuilder { return expression.Key(q.skAttr) }

// BeginsWith restricts the sort key to a prefix.
func (q *Query[T]) BeginsWith(prefix string) *Query[T] {
	c := q.skName().BeginsWith(prefix)
	q.sk, q.skDesc = &c, "begins_with\x00"+prefix
	return q
}

// Between restricts the sort key to [lo, hi].
func (q *Query[T]) Between(lo, hi string) *Query[T] {
	c := q.skName().Between(expression.Value(lo), expression.Value(hi))
	q.sk, q.skDesc = &c, "between\x00"+lo+"\x00"+hi
	return q
}

// SortKey restricts the sort key with op ("=", "<", "<=", ">", ">=").
func (q *Query[T]) SortKey(op, v string) *Query[T] {
	k, val := q.skName(), expression.Value(v)
	var c expression.KeyConditionBuilder
	switch op {
	case "=":
		c = k.Equal(val)
	case "<":
		c = k.LessThan(val)
	case "<=":
		c = k.LessThanEqual(val)
	case ">":
		c = k.GreaterThan(val)
	case ">=":
		c = k.GreaterThanEqual(val)
	default:
		q.err = fmt.Errorf("%w: sort key operator %q", ErrInvalid, op)
		return q
	}
	q.sk, q.skDesc = &c, op+"\x00"+v
	return q
}

// Consistent makes the query read strongly consistently (ConsistentRead),
// at twice the read cost. Only the base table supports it: on a GSI the
// query fails with ErrInvalid.
func (q *Query[T]) Consistent() *Query[T] {
	if q.index != "" {
		q.err = fmt.Errorf("%w: index %s: global secondary indexes do not support consistent reads", ErrInvalid, q.index)
	}
	q.strong = true
	return q
}

// Desc returns items in descending sort-key order (ScanIndexForward=false).
func (q *Query[T]) Desc() *Query[T] { q.desc = true; return q }

// Limit sets the page size (1..MaxPageSize). Zero means one DynamoDB page
// (up to 1 MB), or the next non-empty one when a filter left it empty.
func (q *Query[T]) Limit(n int) *Query[T] {
	if n < 0 || n > MaxPageSize {
		q.err = fmt.Errorf("%w: limit %d out of range 1..%d", ErrInvalid, n, MaxPageSize)
	}
	q.limit = n
	return q
}

// Filter adds a filter on non-key attributes (ANDed). Filtered pages may
// take more than one call to fill.
func (q *Query[T]) Filter(c expression.ConditionBuilder) *Query[T] {
	q.filter = and(q.filter, c)
	return q
}

// After resumes after a cursor from a previous Page of the same query. A
// cursor that is malformed, tampered with, or issued for another table,
// index, partition, sort-key condition, tenant or direction makes Page fail
// with ErrCursor.
func (q *Query[T]) After(cursor string) *Query[T] { q.cursor = cursor; return q }

func (q *Query[T]) body() cursorBody {
	return cursorBody{Table: q.table.name, Index: q.index, PK: q.pk, Tenant: q.table.tenant, Desc: q.desc, SK: q.skDesc}
}

// keyAttrs lists the attributes of a LastEvaluatedKey for this query.
func (q *Query[T]) keyAttrs() []string {
	s := q.table.schema
	attrs := []string{s.PK}
	if s.SK != "" {
		attrs = append(attrs, s.SK)
	}
	if q.index != "" {
		attrs = append(attrs, q.pkAttr)
		if q.skAttr != "" {
			attrs = append(attrs, q.skAttr)
		}
	}
	return attrs
}

// Page reads one page. When Limit is n, it asks DynamoDB for n+1 items so
// that it knows whether more follow: the last page has no cursor, and an
// unfiltered page costs exactly one call.
func (q *Query[T]) Page(ctx context.Context) (Page[T], error) {
	var p Page[T]
	if q.err != nil {
		return p, q.err
	}
	var start Item
	if q.cursor != "" {
		var err error
		if start, err = q.table.db.decodeCursor(q.cursor, q.body(), q.keyAttrs()); err != nil {
			return p, err
		}
	}
	want := 0
	if q.limit > 0 {
		want = q.limit + 1
	}
	items, start, calls, err := q.fetch(ctx, start, want)
	p.Calls = calls
	if err != nil {
		return p, err
	}
	// resume is the key the next page starts after: the last item returned
	// when the page was cut, else where DynamoDB stopped reading.
	var resume Item
	switch {
	case q.limit > 0 && len(items) > q.limit:
		items = items[:q.limit]
		resume = items[len(items)-1]
	case start != nil:
		resume = start
	}
	if resume != nil {
		body := q.body()
		body.Key = q.keyOf(resume)
		if p.Cursor, err = q.table.db.encodeCursor(body); err != nil {
			return p, err
		}
	}
	p.Items, err = q.decodeAll(items)
	return p, err
}

// keyOf returns the key attributes of item, as a cursor holds them.
func (q *Query[T]) keyOf(item Item) map[string]string {
	key := map[string]string{}
	for _, a := range q.keyAttrs() {
		key[a] = str(item[a])
	}
	return key
}

// decodeAll decodes raw items.
func (q *Query[T]) decodeAll(items []Item) ([]*T, error) {
	out := make([]*T, 0, len(items))
	for _, it := range items {
		v, err := q.decode(it)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// fetch reads the query's items after start (nil: from the beginning)
// until it holds want of them (0: until a call returns some) or the
// query is read to its end. It returns the items, the key where DynamoDB
// stopped reading (nil at the end), and how many calls it made.
func (q *Query[T]) fetch(ctx context.Context, start Item, want int) ([]Item, Item, int, error) {
	kc := expression.Key(q.pkAttr).Equal(expression.Value(q.pk))
	if q.sk != nil {
		kc = kc.And(*q.sk)
	}
	b := expression.NewBuilder().WithKeyCondition(kc)
	filter := q.filter
	if tc := q.table.tenantCond(); tc != nil {
		filter = and(filter, *tc)
	}
	if filter != nil {
		b = b.WithFilter(*filter)
	}
	e, err := b.Build()
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%w: query: %v", ErrInvalid, err)
	}
	var items []Item
	calls := 0
	for {
		in := &dynamodb.QueryInput{
			TableName:                 aws.String(q.table.name),
			KeyConditionExpression:    e.KeyCondition(),
			FilterExpression:          e.Filter(),
			ExpressionAttributeNames:  e.Names(),
			ExpressionAttributeValues: e.Values(),
			ScanIndexForward:          aws.Bool(!q.desc),
			ExclusiveStartKey:         start,
			ReturnConsumedCapacity:    q.table.db.consumed(),
		}
		if q.strong {
			in.ConsistentRead = aws.Bool(true)
		}
		if q.index != "" {
			in.IndexName = aws.String(q.index)
		}
		if want > 0 {
			n := want - len(items)
			if q.filter != nil {
				// DynamoDB's Limit counts items read before the filter:
				// read in bigger steps, or a sparse filter takes a call
				// per few items. Extra matches are dropped and read again
				// by the next page. (Not for a tenant view's own filter,
				// which matches everything in a tenant's partition.)
				n = max(n, filteredReadSize)
			}
			in.Limit = aws.Int32(int32(n))
		}
		t0 := time.Now()
		out, err := q.table.db.client.Query(ctx, in)
		var cc []types.ConsumedCapacity
		if out != nil {
			cc = one(out.ConsumedCapacity)
		}
		q.table.db.observe(ctx, "Query", q.table.name, q.index, t0, cc, err)
		calls++
		if err != nil {
			return nil, nil, calls, fmt.Errorf("ddb: query %s %s: %w", q.table.name, q.index, err)
		}
		items = append(items, out.Items...)
		start = out.LastEvaluatedKey
		if start == nil || (want > 0 && len(items) >= want) || (want == 0 && len(items) > 0) {
			return items, start, calls, nil
		}
		if filter != nil && calls >= MaxFilteredCalls {
			return items, start, calls, nil // a sparse filter: return what matched so far, and a cursor
		}
	}
}

// All iterates over every item of the query, page by page.
func (q *Query[T]) All(ctx context.Context) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		c := *q
		if c.limit == 0 {
			c.limit = 100
		}
		yieldPages(c.cursor, func(cursor string) (Page[T], error) {
			c.cursor = cursor
			return c.Page(ctx)
		}, yield)
	}
}

// yieldPages yields the items of page after page, page(cursor) reading
// the one after cursor, starting after cursor ("" for the first), until a
// page has no cursor or yield returns false; a page's error is yielded
// and ends it.
func yieldPages[T any](cursor string, page func(cursor string) (Page[T], error), yield func(*T, error) bool) {
	for {
		p, err := page(cursor)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, v := range p.Items {
			if !yield(v, nil) {
				return
			}
		}
		if p.Cursor == "" {
			return
		}
		cursor = p.Cursor
	}
}
