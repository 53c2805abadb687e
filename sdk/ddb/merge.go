package ddb

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"iter"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxMergeStreams bounds the queries one Merge reads together. Each page
// costs up to one Query per stream, and the cursor holds a key per stream.
const MaxMergeStreams = 32

// MaxMergeCursorLen bounds the length of a Merge's cursor. It is longer
// than a Query's (4096), since it holds a position per stream: 32 streams
// whose keys are each about 300 bytes fit.
const MaxMergeCursorLen = 16384

// Merge reads several queries (streams) as one, in the order cmp defines:
// a k-way merge. Each stream must already come in that order (for
// example, queries in Desc order merged by a descending cmp); the merge
// then returns every item of every stream exactly once, in order, across
// pages. Build it with NewMerge, read it with Page or All.
//
// Cost: a page reads each stream that still has items with one Query of
// Limit+1 items (more only if DynamoDB's 1 MB response limit cuts it),
// concurrently; a stream read to its end is not queried again. The first
// page therefore costs one Query per stream, and a page reads up to
// streams × (Limit+1) items to return Limit of them: items read and not
// returned are read again by a later page.
//
// The cursor is sealed like a Query's: opaque, tamper-proof and bound to
// the streams (table, tenant, index, partition, sort-key condition and
// direction of each, in order). A cursor of another merge, of a Query, or
// altered, makes Page fail with ErrCursor.
type Merge[T any] struct {
	queries []*Query[T]
	cmp     func(a, b *T) int
	limit   int
	cursor  string
	err     error
}

// NewMerge returns the merge of queries, ordered by cmp (negative when a
// comes before b). Items that cmp finds equal come in stream order. The
// queries must be on tables of one DB, must not be filtered (a filter
// breaks the one-Query-per-stream bound), and their own Limit and After
// are ignored: the merge's apply.
func NewMerge[T any](cmp func(a, b *T) int, queries ...*Query[T]) *Merge[T] {
	m := &Merge[T]{queries: queries, cmp: cmp, limit: 100}
	switch {
	case len(queries) > MaxMergeStreams:
		m.err = fmt.Errorf("%w: merge of %d queries; at most %d", ErrInvalid, len(queries), MaxMergeStreams)
	case cmp == nil:
		m.err = fmt.Errorf("%w: merge without an order", ErrInvalid)
	}
	for i, q := range queries {
		switch {
		case q.err != nil:
			m.err = q.err
		case q.filter != nil:
			m.err = fmt.Errorf("%w: merge stream %d is filtered", ErrInvalid, i)
		case q.table.db != queries[0].table.db:
			m.err = fmt.Errorf("%w: merge streams on tables of different DBs", ErrInvalid)
		}
	}
	return m
}

// Limit sets the page size (1..MaxPageSize; default 100).
func (m *Merge[T]) Limit(n int) *Merge[T] {
	if n < 1 || n > MaxPageSize {
		m.err = fmt.Errorf("%w: limit %d out of range 1..%d", ErrInvalid, n, MaxPageSize)
	}
	m.limit = n
	return m
}

// After resumes after a cursor from a previous Page of the same merge.
func (m *Merge[T]) After(cursor string) *Merge[T] { m.cursor = cursor; return m }

// All iterates over every item of the merge, in order, page by page
// (Limit items a page), from the cursor After set, if any.
func (m *Merge[T]) All(ctx context.Context) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		c := *m
		yieldPages(c.cursor, func(cursor string) (Page[T], error) {
			c.cursor = cursor
			return c.Page(ctx)
		}, yield)
	}
}

// mergeCursor is what a merge's cursor says: which streams it was issued
// for (Bind, a digest of their bindings) and where each stands.
type mergeCursor struct {
	Bind []byte      `json:"b"`
	S    []mergeSpot `json:"s"`
}

// mergeSpot is one stream's position: after key K (the values of the
// query's key attributes, in order), or at its start when K is empty; or
// read to its end (Done). K leaves out the partition key, which the query
// fixes.
type mergeSpot struct {
	K    []string `json:"k,omitempty"`
	Done bool     `json:"d,omitempty"`
}

// bind digests the streams' bindings, in order.
func (m *Merge[T]) bind() []byte {
	bodies := make([]cursorBody, len(m.queries))
	for i, q := range m.queries {
		bodies[i] = q.body()
	}
	raw, _ := json.Marshal(bodies) // plain strings and bools: cannot fail
	sum := sha256.Sum256(raw)
	return sum[:]
}

// start opens the cursor into each stream's position.
func (m *Merge[T]) start() ([]mergeSpot, error) {
	spots := make([]mergeSpot, len(m.queries))
	if m.cursor == "" {
		return spots, nil
	}
	var c mergeCursor
	if err := m.queries[0].table.db.open(mergeCursorInfo, m.cursor, MaxMergeCursorLen, &c); err != nil {
		return nil, err
	}
	if string(c.Bind) != string(m.bind()) || len(c.S) != len(m.queries) {
		return nil, fmt.Errorf("%w: issued for other queries (table, tenant, index, partition, sort-key condition or direction)", ErrCursor)
	}
	for i, s := range c.S {
		if len(s.K) != 0 && len(s.K) != len(spotAttrs(m.queries[i])) {
			return nil, fmt.Errorf("%w: wrong key", ErrCursor)
		}
	}
	return c.S, nil
}

// mergeStream is what one page read of one stream.
type mergeStream[T any] struct {
	raw   []Item
	items []*T
	next  Item // where DynamoDB stopped reading; nil at the stream's end
	used  int  // items returned by this page
	calls int
	err   error
}

// Page reads one page: up to Limit items, in order, and a cursor when any
// stream has items left. There is never an empty page with a cursor.
func (m *Merge[T]) Page(ctx context.Context) (Page[T], error) {
	var p Page[T]
	if m.err != nil {
		return p, m.err
	}
	spots, err := m.start()
	if err != nil {
		return p, err
	}
	streams := make([]mergeStream[T], len(m.queries))
	var wg sync.WaitGroup
	for i, q := range m.queries {
		if spots[i].Done {
			continue
		}
		var from Item
		if len(spots[i].K) > 0 {
			from = Item{q.pkAttr: &types.AttributeValueMemberS{Value: q.pk}}
			for j, a := range spotAttrs(q) {
				from[a] = &types.AttributeValueMemberS{Value: spots[i].K[j]}
			}
		}
		wg.Go(func() {
			s := &streams[i]
			s.raw, s.next, s.calls, s.err = q.fetch(ctx, from, m.limit+1)
			if s.err == nil {
				s.items, s.err = q.decodeAll(s.raw)
			}
		})
	}
	wg.Wait()
	for i := range streams {
		p.Calls += streams[i].calls
		if streams[i].err != nil {
			return p, streams[i].err
		}
	}
	for len(p.Items) < m.limit {
		best := -1
		for i := range streams {
			s := &streams[i]
			if s.used < len(s.items) && (best < 0 || m.cmp(s.items[s.used], streams[best].items[streams[best].used]) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		p.Items = append(p.Items, streams[best].items[streams[best].used])
		streams[best].used++
	}
	more := false
	for i, q := range m.queries {
		s := &streams[i]
		switch {
		case spots[i].Done:
		case s.used > 0 && s.used < len(s.raw):
			spots[i].K = keyValues(q, s.raw[s.used-1])
		case s.used == len(s.raw) && s.next == nil:
			spots[i] = mergeSpot{Done: true}
		case s.used == len(s.raw):
			spots[i].K = keyValues(q, s.next) // all read was returned, and more may follow
		}
		more = more || !spots[i].Done
	}
	if more {
		p.Cursor, err = m.queries[0].table.db.seal(mergeCursorInfo, mergeCursor{Bind: m.bind(), S: spots})
	}
	return p, err
}

// spotAttrs lists the key attributes a merge cursor holds for q: those of
// its LastEvaluatedKey but the partition's, which is q's own.
func spotAttrs[T any](q *Query[T]) []string {
	var out []string
	for _, a := range q.keyAttrs() {
		if a != q.pkAttr {
			out = append(out, a)
		}
	}
	return out
}

// keyValues lists item's key attributes for q, in spotAttrs order.
func keyValues[T any](q *Query[T], item Item) []string {
	attrs := spotAttrs(q)
	out := make([]string, len(attrs))
	for i, a := range attrs {
		out[i] = str(item[a])
	}
	return out
}
