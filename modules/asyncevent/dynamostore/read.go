// Reads of requests: by id, by user (GSI1), by event and status (GSI2,
// through its shards), and a request's StatusLog.

package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// GetRequest implements asyncevent.RequestReader, asyncevent.WorkerStore
// and asyncevent.SweepStore (a strongly consistent read, so a client
// polling right after its 202 sees its request).
func (s *Store) GetRequest(ctx context.Context, requestID string) (*asyncevent.Request, error) {
	it, err := s.requests.GetStrong(ctx, requestKey(requestID))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, asyncevent.ErrRequestNotFound
	}
	if err != nil {
		return nil, err
	}
	return it.request(), nil
}

// UserRequests implements asyncevent.RequestReader.
func (s *Store) UserRequests(ctx context.Context, userID string, limit int, cursor string) ([]*asyncevent.Request, string, error) {
	return page(ctx, s.requests.Query("GSI1", userPK.Build(userID)).Desc().Limit(limit).After(cursor))
}

// queuedRequests pages through eventID's queued requests (GSI2).
// With a sharded index (IndexShards > 1) it merges the shards' queries
// (ddb.NewMerge) and reads as from a narrow index; the cursor is the
// merge's, bound to the event's shards.
func (s *Store) queuedRequests(ctx context.Context, eventID string, status asyncevent.Status, limit int, cursor string) ([]*asyncevent.Request, string, error) {
	shards, err := s.indexShards(ctx, eventID)
	if err != nil {
		return nil, "", err
	}
	query := func(n int, after string) pager {
		if shards > 1 {
			return s.shardMerge(eventID, shards, true, func(q *ddb.Query[RequestItem]) *ddb.Query[RequestItem] { return q.Desc() }).Limit(n).After(after)
		}
		return s.requests.Query("GSI2", eventPK.Build(eventID)).Desc().Limit(n).After(after)
	}
	if !s.narrow && shards == 1 {
		q := s.requests.Query("GSI2", eventPK.Build(eventID)).Desc().Limit(limit).After(cursor)
		if status != "" {
			q.Filter(expression.Name("status").Equal(expression.Value(string(status))))
		}
		return page(ctx, q)
	}
	// The index holds no status: the page's requests are read from the
	// table and filtered here, reading on as a filtered query does until
	// the page is full or the index ends. Each step reads only as many
	// entries as the page still lacks, so it never reads past the page's
	// last request, and the cursor resumes right after what was read.
	var rs []*asyncevent.Request
	for {
		p, err := query(limit-len(rs), cursor).Page(ctx)
		if err != nil {
			return pageErr(err)
		}
		items, err := s.fetch(ctx, p.Items, status)
		if err != nil {
			return nil, "", err
		}
		for _, it := range items {
			rs = append(rs, it.request())
		}
		cursor = p.Cursor
		if cursor == "" {
			return rs, "", nil
		}
		if len(rs) == limit {
			// Like the filtered query, the last page has no cursor: look
			// on for one more request of the status.
			more, err := s.anyAfter(ctx, query, cursor, status)
			if err != nil || !more {
				return rs, "", err
			}
			return rs, cursor, nil
		}
	}
}

// anyAfter reports whether the index holds a request of status after
// cursor, reading as little of it as it can.
func (s *Store) anyAfter(ctx context.Context, query func(int, string) pager, cursor string, status asyncevent.Status) (bool, error) {
	if status == "" {
		return true, nil
	}
	// One entry first (the next one often has the status), then more
	// at a time, up to a BatchGet's worth.
	for n := 1; cursor != ""; n = min(2*n, ddb.MaxBatchGet) {
		p, err := query(n, cursor).Page(ctx)
		if err != nil {
			return false, err
		}
		items, err := s.fetch(ctx, p.Items, status)
		if err != nil || len(items) > 0 {
			return len(items) > 0, err
		}
		cursor = p.Cursor
	}
	return false, nil
}

// fetch reads the requests of index entries from the table (one BatchGet
// per 100, eventually consistent like the index), in the entries' order,
// keeping those in one of statuses (all when none is given). A request
// gone from the table (expired) is left out.
func (s *Store) fetch(ctx context.Context, entries []*RequestItem, statuses ...asyncevent.Status) ([]*RequestItem, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	keys := make([]ddb.Key, len(entries))
	for i, e := range entries {
		keys[i] = requestKey(e.RequestID)
	}
	items, err := s.requests.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := items[:0]
	for _, it := range items {
		if it != nil && (len(statuses) == 0 || statuses[0] == "" || contains(statuses, it.Status)) {
			out = append(out, it)
		}
	}
	return out, nil
}

// index iterates over the requests a GSI2 query finds, whole: from the
// index when it projects ALL (filtered there to statuses), else fetched
// from the table 100 at a time.
func (s *Store) index(ctx context.Context, q *ddb.Query[RequestItem], statuses ...asyncevent.Status) iter.Seq2[*asyncevent.Request, error] {
	if !s.narrow {
		if len(statuses) > 0 {
			vs := make([]expression.OperandBuilder, len(statuses))
			for i, st := range statuses {
				vs[i] = expression.Value(string(st))
			}
			q.Filter(expression.Name("status").In(vs[0], vs[1:]...))
		}
		return requests(q.All(ctx))
	}
	return s.fetchAll(ctx, q.All(ctx), statuses...)
}

// pager is a GSI2 read one page at a time: a query, or the merge of a
// sharded index's.
type pager interface {
	Page(ctx context.Context) (ddb.Page[RequestItem], error)
}

// eventIndex iterates over the requests of eventID's index, whole, in
// GSI2 order (see index), each shard's query shaped by cond; a sharded
// index's shards are merged and its requests read from the table.
func (s *Store) eventIndex(ctx context.Context, eventID string, cond func(*ddb.Query[RequestItem]) *ddb.Query[RequestItem], statuses ...asyncevent.Status) iter.Seq2[*asyncevent.Request, error] {
	shards, err := s.indexShards(ctx, eventID)
	switch {
	case err != nil:
		return func(yield func(*asyncevent.Request, error) bool) { yield(nil, err) }
	case shards > 1:
		return s.fetchAll(ctx, s.shardMerge(eventID, shards, false, cond).Limit(ddb.MaxPageSize).All(ctx), statuses...)
	}
	return s.index(ctx, cond(s.requests.Query("GSI2", eventPK.Build(eventID))).Limit(ddb.MaxPageSize), statuses...)
}

// fetchAll iterates over the requests of index entries, read from the
// table 100 at a time and kept if in one of statuses (all if none).
func (s *Store) fetchAll(ctx context.Context, entries iter.Seq2[*RequestItem, error], statuses ...asyncevent.Status) iter.Seq2[*asyncevent.Request, error] {
	return func(yield func(*asyncevent.Request, error) bool) {
		var batch []*RequestItem
		flush := func() bool {
			items, err := s.fetch(ctx, batch, statuses...)
			batch = batch[:0]
			if err != nil {
				yield(nil, err)
				return false
			}
			for _, it := range items {
				if !yield(it.request(), nil) {
					return false
				}
			}
			return true
		}
		for e, err := range entries {
			if err != nil {
				yield(nil, err)
				return
			}
			if batch = append(batch, e); len(batch) == ddb.MaxBatchGet && !flush() {
				return
			}
		}
		flush()
	}
}

func page(ctx context.Context, q *ddb.Query[RequestItem]) ([]*asyncevent.Request, string, error) {
	p, err := q.Page(ctx)
	if err != nil {
		return pageErr(err)
	}
	rs := make([]*asyncevent.Request, len(p.Items))
	for i, it := range p.Items {
		rs[i] = it.request()
	}
	return rs, p.Cursor, nil
}

func pageErr(err error) ([]*asyncevent.Request, string, error) {
	if errors.Is(err, ddb.ErrCursor) {
		return nil, "", fmt.Errorf("%w: %v", asyncevent.ErrCursor, err)
	}
	return nil, "", err
}

// AllEventRequests implements asyncevent.StatsReader.
func (s *Store) AllEventRequests(ctx context.Context, eventID string) iter.Seq2[*asyncevent.Request, error] {
	return s.eventIndex(ctx, eventID, func(q *ddb.Query[RequestItem]) *ddb.Query[RequestItem] { return q })
}

// Logs implements asyncevent.AdminReader.
func (s *Store) Logs(ctx context.Context, requestID string) ([]*asyncevent.StatusLog, error) {
	var out []*asyncevent.StatusLog
	for l, err := range s.logs.Query("", requestPK.Build(requestID)).BeginsWith("LOG#").Limit(ddb.MaxPageSize).All(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, l.statusLog())
	}
	return out, nil
}
