package dynamostore

import (
	"context"
	"errors"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// An event's line is LINE#<eventId> / LINE: a partition of its own, so
// that its write every second does not add to the event's partition
// (EVENT#<eventId>), where the capacity item takes every allocation.
var linePK = ddb.MustFormat("LINE#{eventId}")

const skLine = "LINE"

func lineKey(id string) ddb.Key { return ddb.Key{PK: linePK.Build(id), SK: skLine} }

// LineItem is an event's line (asyncevent.Line): Pacer's, not in the
// source documents. Its points are two lists of the same length, about
// 3 KB at most (asyncevent's maxLinePoints).
type LineItem struct {
	EventID      string  `dynamodbav:"eventId"`
	PointsAt     []int64 `dynamodbav:"pointsAt"`
	PointsCount  []int64 `dynamodbav:"pointsCount"`
	Settled      int64   `dynamodbav:"settled"`
	Through      int64   `dynamodbav:"through"`
	ThroughBound int64   `dynamodbav:"throughBound"`
	SeatsLeft    *int64  `dynamodbav:"seatsLeft,omitempty"` // nil: stored by a keeper before it had the field
	Rate         float64 `dynamodbav:"rate"`
	MeasuredAt   int64   `dynamodbav:"measuredAt"`
	Version      int64   `dynamodbav:"version"`
	TTL          int64   `dynamodbav:"ttl,omitempty"` // the event's
}

func (it *LineItem) line() *asyncevent.Line {
	l := &asyncevent.Line{EventID: it.EventID, Settled: it.Settled, Through: it.Through, ThroughBound: it.ThroughBound,
		Rate: it.Rate, MeasuredAt: it.MeasuredAt, Version: it.Version, TTL: it.TTL}
	if it.SeatsLeft != nil {
		l.SeatsLeft, l.SeatsKnown = *it.SeatsLeft, true
	}
	l.Points = make([]asyncevent.LinePoint, min(len(it.PointsAt), len(it.PointsCount)))
	for i := range l.Points {
		l.Points[i] = asyncevent.LinePoint{At: it.PointsAt[i], Count: it.PointsCount[i]}
	}
	return l
}

// GetLine implements asyncevent.LineReader (eventually consistent: a
// line a second old is what it is for).
func (s *Store) GetLine(ctx context.Context, eventID string) (*asyncevent.Line, error) {
	it, err := s.lines.Get(ctx, lineKey(eventID))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return it.line(), nil
}

// PutLine implements asyncevent.LineStore.
func (s *Store) PutLine(ctx context.Context, l *asyncevent.Line) error {
	it := &LineItem{EventID: l.EventID, Settled: l.Settled, Through: l.Through, ThroughBound: l.ThroughBound, Rate: l.Rate,
		MeasuredAt: l.MeasuredAt, Version: l.Version + 1, TTL: l.TTL,
		PointsAt: make([]int64, len(l.Points)), PointsCount: make([]int64, len(l.Points))}
	for i, p := range l.Points {
		it.PointsAt[i], it.PointsCount[i] = p.At, p.Count
	}
	if l.SeatsKnown {
		it.SeatsLeft = &l.SeatsLeft
	}
	op := s.lines.Create(it)
	if l.Version > 0 {
		op = s.lines.Put(it).If(expression.Name("version").Equal(expression.Value(l.Version)))
	}
	err := op.Run(ctx)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return asyncevent.ErrLineMeasured
	}
	return err
}

// QueuedTimes implements asyncevent.LineStore: the index entries' queuedAt
// read from GSI2 (its keys and queuedAt only), every shard.
func (s *Store) QueuedTimes(ctx context.Context, eventID string, from, before int64) ([]int64, error) {
	if before <= from {
		return nil, nil
	}
	shards, err := s.indexShards(ctx, eventID)
	if err != nil {
		return nil, err
	}
	pks := []string{eventPK.Build(eventID)}
	if shards > 1 {
		pks = pks[:0]
		for i := range shards {
			pks = append(pks, eventShardPK.Build(eventID, strconv.Itoa(i)))
		}
	}
	lo, hi := "QAT#"+ddb.Millis(from)+"#", "QAT#"+ddb.Millis(before-1)+"#~"
	var out []int64
	for _, pk := range pks {
		for it, err := range s.requests.Query("GSI2", pk).Between(lo, hi).Limit(ddb.MaxPageSize).All(ctx) {
			if err != nil {
				return nil, err
			}
			out = append(out, it.QueuedAt)
		}
	}
	return out, nil
}
