package dynamostore

import (
	"context"
	"fmt"
	"hash/fnv"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// The pending index (GSI3) is sparse: a request has an entry only while
// it is RECEIVED, or FAILED_FINAL / FAILED_INGEST_ENQUEUE (its enqueue
// failed at ingest and waits for an operator's re-queue). Those requests
// are in no other index (they join GSI1 and GSI2 at QUEUED), and the
// sweep, the admin list and stats and the start of a draw find them here
// by Query instead of scanning the table.
//
//	GSI3PK  PENDING#<day of requestedAt, UTC, yyyymmdd>#<shard, 2 digits>
//	GSI3SK  EVENT#<eventId>#RAT#<requestedAt, 13 digits>#REQ#<requestId>
//
// Every participation writes an entry (at RECEIVED, in the ingest
// transaction) and removes it (at QUEUED): two index writes, so the keys
// are spread. Each day has PendingShards partitions; an event writes to
// 8 × its IndexShards of them (pendingShards, at most all), starting at a
// shard its id hashes to, and the events of a day spread over all of them.
// GSI2 takes one write per participation on IndexShards partitions, the
// pending index two on eight times as many (at most 16): a partition of it
// takes at most as many writes as one of the event's GSI2 partitions up to
// IndexShards 8, a quarter with the default IndexShards 1, so it is not
// the first to throttle (docs/capacity.md). Reads of one event query its shards for each day of its life
// (begins_with its own prefix); the sweep queries every shard of the days
// it looks back over. docs/capacity.md prices both.

// PendingShards is how many partitions each day of the pending index is
// written over. All events together get PendingShards × 1,000 / 2 = 8,000
// participations a second on it, twice what DynamoDB's default table
// quota of 40,000 write units a second admits at about 10 units each.
const PendingShards = 16

// pendingDayLayout is the day of a pending partition (UTC).
const pendingDayLayout = "20060102"

var (
	pendingPK = ddb.MustFormat("PENDING#{day}#{shard}")
	pendingSK = ddb.MustFormat("EVENT#{eventId}#RAT#{requestedAt}#REQ#{requestId}")
)

// pendingDay is the pending partition day of an epoch-millis instant.
func pendingDay(ms int64) string { return time.UnixMilli(ms).UTC().Format(pendingDayLayout) }

// pendingShards are the shards of the pending index eventID writes to,
// for an event index of indexShards partitions: 8 × indexShards of them
// (at most PendingShards), from the one its id hashes to.
func pendingShards(eventID string, indexShards int) []int {
	n := min(8*max(indexShards, 1), PendingShards)
	h := fnv.New32a()
	_, _ = h.Write([]byte(eventID)) // a hash.Hash never fails to write
	first := int(h.Sum32() % PendingShards)
	out := make([]int, n)
	for i := range out {
		out[i] = (first + i) % PendingShards
	}
	return out
}

// pendingKeys are the GSI3 keys of request r of an event whose index has
// indexShards partitions.
func pendingKeys(r *asyncevent.Request, indexShards int) (pk, sk string) {
	shards := pendingShards(r.EventID, indexShards)
	shard := shards[IndexShard(r.RequestID, len(shards))]
	return pendingPK.Build(pendingDay(r.RequestedAt), pendingShard(shard)), pendingSortKey(r.EventID, r.RequestedAt, r.RequestID)
}

// pendingSortKey is GSI3SK: EVENT#<eventId>#RAT#<requestedAt>#REQ#<requestId>.
func pendingSortKey(eventID string, requestedAt int64, requestID string) string {
	return pendingSK.Build(eventID, ddb.Millis(requestedAt), requestID)
}

func pendingShard(i int) string { return ddb.PadInt(int64(i), 2) }

// pendingRequestItem is a Request item written with its pending-index
// keys (at ingest): the same entity, with GSI3's attributes.
type pendingRequestItem struct {
	RequestItem
	GSI3PK string `dynamodbav:"GSI3PK"`
	GSI3SK string `dynamodbav:"GSI3SK"`
}

// stillPending says whether a transition to t.To keeps the request in the
// pending index: to RECEIVED (a re-queue) and to a failed enqueue.
func stillPending(t *asyncevent.Transition) bool { return asyncevent.NotQueued(t.To, t.ResultCode) }

// pendingDays lists the pending partition days from the instant from to
// the instant to (epoch millis), newest first.
func pendingDays(from, to int64) []string {
	var days []string
	first := time.UnixMilli(from).UTC().Truncate(24 * time.Hour)
	for d := time.UnixMilli(to).UTC().Truncate(24 * time.Hour); !d.Before(first); d = d.Add(-24 * time.Hour) {
		days = append(days, d.Format(pendingDayLayout))
	}
	return days
}

// pendingSlack widens the days read around an instant: requests are timed
// by the clocks of the processes that wrote them.
const pendingSlack = time.Hour

// eventDays are the pending partition days an event's requests can be
// in, newest first: from its creation to its end or now, whichever is
// first.
func eventDays(l layout, now int64) []string {
	slack := pendingSlack.Milliseconds()
	return pendingDays(l.createdAt-slack, min(now, l.endsAt)+slack)
}

// isPending reports whether it is in a state the pending index holds, as
// the index shows it (it lags the table briefly).
func isPending(it *RequestItem) bool { return asyncevent.NotQueued(it.Status, it.ResultCode) }

// pendingQuery is the query of one pending partition, restricted to
// eventID's entries when eventID is not "".
func (s *Store) pendingQuery(day string, shard int, eventID string) *ddb.Query[RequestItem] {
	q := s.requests.Query("GSI3", pendingPK.Build(day, pendingShard(shard))).Limit(ddb.MaxPageSize)
	if eventID != "" {
		q.BeginsWith(pendingSK.Prefix(eventID))
	}
	return q
}

// pendingIn iterates over the pending entries of the given days and
// shards (GSI3 projects whole requests), eventID's only when it is not "",
// partition after partition.
func (s *Store) pendingIn(ctx context.Context, days []string, shards []int, eventID string) iter.Seq2[*RequestItem, error] {
	return func(yield func(*RequestItem, error) bool) {
		for _, day := range days {
			for _, shard := range shards {
				for it, err := range s.pendingQuery(day, shard, eventID).All(ctx) {
					if !yield(it, err) || err != nil {
						return
					}
				}
			}
		}
	}
}

// allShards is every shard of a pending day.
var allShards = func() []int {
	out := make([]int, PendingShards)
	for i := range out {
		out[i] = i
	}
	return out
}()

// SweepCandidates implements asyncevent.SweepStore with Queries of the
// pending index: every shard of each day from since to now (see
// PendingShards).
func (s *Store) SweepCandidates(ctx context.Context, before, since int64) iter.Seq2[*asyncevent.Request, error] {
	days := pendingDays(since, time.Now().Add(pendingSlack).UnixMilli())
	return func(yield func(*asyncevent.Request, error) bool) {
		for it, err := range s.pendingIn(ctx, days, allShards, "") {
			if err != nil {
				yield(nil, err)
				return
			}
			stranded := it.Status == asyncevent.StatusReceived && it.RequestedAt < before
			if (stranded || asyncevent.FailedEnqueue(it.Status, it.ResultCode)) && !yield(it.request(), nil) {
				return
			}
		}
	}
}

// PendingRequests implements asyncevent.AdminReader with Queries of the
// pending index: eventID's shards, each day of its life.
func (s *Store) PendingRequests(ctx context.Context, eventID string) iter.Seq2[*asyncevent.Request, error] {
	return func(yield func(*asyncevent.Request, error) bool) {
		days, shards, err := s.eventPending(ctx, eventID)
		if err != nil {
			yield(nil, err)
			return
		}
		for it, err := range s.pendingIn(ctx, days, shards, eventID) {
			if err != nil {
				yield(nil, err)
				return
			}
			if isPending(it) && !yield(it.request(), nil) {
				return
			}
		}
	}
}

// eventPending are the pending days and shards of eventID (none for an
// unknown event).
func (s *Store) eventPending(ctx context.Context, eventID string) ([]string, []int, error) {
	l, ok, err := s.layoutOf(ctx, eventID)
	if err != nil || !ok {
		return nil, nil, err
	}
	return eventDays(l, time.Now().UnixMilli()), pendingShards(eventID, l.shards), nil
}

// pendingPage reads up to limit of eventID's pending requests of status
// ("" for both pending states) after the entry whose GSI3SK is after ("" to
// start), newest first (GSI3SK order), and their GSI3SKs. For each day of
// the event, newest first, it queries each of the event's shards for up to
// limit+1 entries below after and merges them here; when a shard has more,
// only what is newer than its last entry is complete, and the next round
// reads on from there.
func (s *Store) pendingPage(ctx context.Context, eventID string, status asyncevent.Status, limit int, after string) ([]*RequestItem, []string, error) {
	days, shards, err := s.eventPending(ctx, eventID)
	if err != nil {
		return nil, nil, err
	}
	prefix := pendingSK.Prefix(eventID)
	if after != "" {
		vals, err := pendingSK.Parse(after)
		if err != nil || len(vals) != 3 || vals[0] != eventID {
			return nil, nil, fmt.Errorf("%w: not a position of %s", asyncevent.ErrCursor, eventID)
		}
		ms, err := strconv.ParseInt(vals[1], 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: not a position of %s", asyncevent.ErrCursor, eventID)
		}
		// Later days hold nothing below the position.
		day := pendingDay(ms)
		days = slices.DeleteFunc(days, func(d string) bool { return d > day })
	}
	var page []*RequestItem
	var keys []string
	for _, day := range days {
		from := after
		for {
			type entry struct {
				sk string
				it *RequestItem
			}
			var got []entry
			complete := "" // entries at or above it are all read
			for _, shard := range shards {
				q := s.requests.Query("GSI3", pendingPK.Build(day, pendingShard(shard))).Desc().Limit(min(limit+1, ddb.MaxPageSize))
				if from != "" {
					q.Between(prefix, from)
				} else {
					q.BeginsWith(prefix)
				}
				p, err := q.Page(ctx)
				if err != nil {
					return nil, nil, err
				}
				for _, it := range p.Items {
					sk := pendingSortKey(eventID, it.RequestedAt, it.RequestID)
					if sk != from && isPending(it) && (status == "" || it.Status == status) {
						got = append(got, entry{sk, it})
					}
				}
				if n := len(p.Items); p.Cursor != "" && n > 0 {
					last := pendingSortKey(eventID, p.Items[n-1].RequestedAt, p.Items[n-1].RequestID)
					complete = max(complete, last)
				}
			}
			slices.SortFunc(got, func(a, b entry) int { return strings.Compare(b.sk, a.sk) })
			for _, e := range got {
				if e.sk < complete {
					break
				}
				if len(page) == limit {
					return page, keys, nil
				}
				page, keys = append(page, e.it), append(keys, e.sk)
			}
			if complete == "" {
				break // the day is read to its end
			}
			from = complete
		}
	}
	return page, keys, nil
}

// listCursor is the cursor of an event's request list while it is in its
// pending part, or (Queued) at the start of its queued part: sealed, and
// bound to the event.
type listCursor struct {
	EventID string `json:"e"`
	After   string `json:"a,omitempty"` // the last GSI3SK returned
	Queued  bool   `json:"q,omitempty"`
}

// The list's cursors: a pending part's (sealed listCursor), or a queued
// part's (GSI2's own cursor), told apart by their first character.
const (
	pendingCursorMark = "p"
	queuedCursorMark  = "q"
	listCursorKind    = "asyncevent event list"
	maxListCursorLen  = 1024
)

// holdsPending reports whether the pending index holds requests of status
// ("" for any).
func holdsPending(status asyncevent.Status) bool {
	return status == "" || status == asyncevent.StatusReceived || status == asyncevent.StatusFailedFinal
}

// EventRequests implements asyncevent.AdminReader: first the event's pending
// requests (RECEIVED and failed enqueues, from the pending index, newest
// requestedAt first), then its queued ones (GSI2, newest queuedAt first),
// under one cursor. A request that moves from one part to the other while
// the list is read (the indexes lag writes briefly) can be listed twice or
// not at all.
func (s *Store) EventRequests(ctx context.Context, q asyncevent.EventRequestsQuery) ([]*asyncevent.Request, string, error) {
	eventID, status, limit, cursor := q.EventID, q.Status, q.Limit, q.Cursor
	c := listCursor{EventID: eventID}
	inner := ""
	switch {
	case cursor == "":
	case strings.HasPrefix(cursor, queuedCursorMark):
		c.Queued, inner = true, cursor[len(queuedCursorMark):]
	case strings.HasPrefix(cursor, pendingCursorMark):
		if err := s.db.OpenCursor(listCursorKind, cursor[len(pendingCursorMark):], maxListCursorLen, &c); err != nil {
			return pageErr(err)
		}
		if c.EventID != eventID {
			return nil, "", fmt.Errorf("%w: issued for another event", asyncevent.ErrCursor)
		}
	default:
		return nil, "", fmt.Errorf("%w: malformed", asyncevent.ErrCursor)
	}
	var out []*asyncevent.Request
	if !c.Queued && holdsPending(status) {
		items, keys, err := s.pendingPage(ctx, eventID, status, limit+1, c.After)
		if err != nil {
			return pageErr(err)
		}
		for _, it := range items[:min(limit, len(items))] {
			out = append(out, it.request())
		}
		if len(items) > limit {
			next, err := s.sealList(listCursor{EventID: eventID, After: keys[limit-1]})
			return out, next, err
		}
	}
	if status == asyncevent.StatusReceived {
		return out, "", nil // GSI2 holds no RECEIVED request
	}
	if len(out) == limit {
		// The page is full: a cursor only if the queued part has any.
		rs, _, err := s.queuedRequests(ctx, eventID, status, 1, "")
		if err != nil || len(rs) == 0 {
			return out, "", err
		}
		next, err := s.sealList(listCursor{EventID: eventID, Queued: true})
		return out, next, err
	}
	rs, next, err := s.queuedRequests(ctx, eventID, status, limit-len(out), inner)
	if err != nil {
		return nil, "", err
	}
	if next != "" {
		next = queuedCursorMark + next
	}
	return append(out, rs...), next, nil
}

// sealList seals a list cursor.
func (s *Store) sealList(c listCursor) (string, error) {
	sealed, err := s.db.SealCursor(listCursorKind, c)
	return pendingCursorMark + sealed, err
}
