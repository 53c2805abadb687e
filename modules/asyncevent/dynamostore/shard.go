package dynamostore

import (
	"cmp"
	"context"
	"errors"
	"hash/fnv"
	"strconv"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// eventShardPK is one shard's GSI2 partition of an event whose index is
// written over several (EventConfig.IndexShards > 1): a departure from the
// default one partition per event, EVENT#{eventId}, taken only by events
// created with it (docs/asyncevent.md, docs/capacity.md).
var eventShardPK = ddb.MustFormat("EVENT#{eventId}#{shard}")

// IndexShard is the shard of an event index of n shards that requestID's
// entry is written to: FNV-1a (32 bits) of the request id, mod n. It is
// stable: the same request always lands on the same shard.
func IndexShard(requestID string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(requestID)) // a hash.Hash never fails to write
	return int(h.Sum32() % uint32(n))
}

// eventIndexPK is the GSI2 partition key of requestID's entry in an event
// index of shards shards: the one-partition EVENT#<eventId> for 0 or 1.
func eventIndexPK(eventID, requestID string, shards int) string {
	if shards <= 1 {
		return eventPK.Build(eventID)
	}
	return eventShardPK.Build(eventID, strconv.Itoa(IndexShard(requestID, shards)))
}

// layout is what a Store keeps of an event's config: what never changes
// once it is created.
type layout struct {
	shards            int // IndexShards, at least 1
	createdAt, endsAt int64
}

// learn notes cfg's layout. A closed event ended at its close (its last
// change), which bounds the days its requests can be in.
func (s *Store) learn(cfg *asyncevent.EventConfig) {
	end := cfg.EndsAt()
	if cfg.Status == asyncevent.EventClosed && cfg.UpdatedAt != 0 {
		end = min(end, cfg.UpdatedAt)
	}
	s.layouts.Store(cfg.EventID, layout{shards: max(cfg.IndexShards, 1), createdAt: cfg.CreatedAt, endsAt: end})
}

// layoutOf is eventID's layout: from the configs this Store has written or
// read, else read from the table (eventually consistent; it never
// changes). ok is false for an unknown event.
func (s *Store) layoutOf(ctx context.Context, eventID string) (l layout, ok bool, err error) {
	if v, ok := s.layouts.Load(eventID); ok {
		return v.(layout), true, nil
	}
	_, err = s.GetEvent(ctx, eventID, false)
	if errors.Is(err, asyncevent.ErrEventNotFound) {
		return layout{shards: 1}, false, nil
	}
	if err != nil {
		return layout{}, false, err
	}
	v, _ := s.layouts.Load(eventID)
	return v.(layout), true, nil
}

// eventEnd is eventID's end as its layout has it (epoch millis; 0 for an
// unknown event), which a StatusLog of its requests outlives (logTTL).
func (s *Store) eventEnd(ctx context.Context, eventID string) (int64, error) {
	if eventID == "" {
		return 0, nil
	}
	l, _, err := s.layoutOf(ctx, eventID)
	return l.endsAt, err
}

// indexShards is eventID's IndexShards (at least 1; 1 for an unknown
// event).
func (s *Store) indexShards(ctx context.Context, eventID string) (int, error) {
	l, _, err := s.layoutOf(ctx, eventID)
	return l.shards, err
}

// byQueuedAt orders index entries as GSI2SK (QAT#<queuedAt>#REQ#<requestId>,
// queuedAt zero-padded) orders them.
func byQueuedAt(a, b *RequestItem) int {
	return cmp.Or(cmp.Compare(a.QueuedAt, b.QueuedAt), cmp.Compare(a.RequestID, b.RequestID))
}

// shardMerge reads the shards shards of eventID's index as one, in GSI2
// order (newest first with desc), each shard's query shaped by cond.
func (s *Store) shardMerge(eventID string, shards int, desc bool, cond func(*ddb.Query[RequestItem]) *ddb.Query[RequestItem]) *ddb.Merge[RequestItem] {
	qs := make([]*ddb.Query[RequestItem], shards)
	for i := range qs {
		qs[i] = cond(s.requests.Query("GSI2", eventShardPK.Build(eventID, strconv.Itoa(i))))
	}
	order := byQueuedAt
	if desc {
		order = func(a, b *RequestItem) int { return byQueuedAt(b, a) }
	}
	return ddb.NewMerge(order, qs...)
}
