package asyncevent

import (
	"cmp"
	"slices"
)

// Line is an event's line as a LineKeeper last measured it: how many of
// the event's queued requests (its index, decided or not) were queued
// before each of a few times. A request's place is read from it (Place)
// without counting the line on every poll. One per event (the
// EVENT_LINE item, docs/asyncevent.md, Place in line).
type Line struct {
	EventID string
	// Points are cumulative counts, ascending in both: Points[i].Count
	// requests were queued before Points[i].At (epoch millis). Counts are
	// relative to the first measurement's origin, so only differences
	// mean anything.
	Points []LinePoint
	// Settled is measuredAt − Lateness.Max: no request queued before it
	// can still appear in the index, so the points up to it are final and
	// the next measurement reads on from there.
	Settled int64
	// Through is the count at the arrival allocator's position when
	// measured: every request before it is decided (FIRST_COME arrival);
	// ThroughBound bounds its error (the bucket the position fell in).
	Through, ThroughBound int64
	// SeatsLeft is the event's capacityRemaining read with the allocator's
	// position Through counts from (FIRST_COME arrival), so that a place
	// shows the seats and the requests ahead as of the same moment:
	// neither the decisions made before that read nor those made after it
	// are in either (SeatsKnown false: a line stored without it, by a keeper
	// older than the field).
	SeatsLeft  int64
	SeatsKnown bool
	// Rate is the allocator's decisions per second, smoothed over the
	// measurements (0 until two measurements saw it move).
	Rate float64
	// MeasuredAt is when it was measured (epoch millis).
	MeasuredAt int64
	// Version is what the measurement's write was conditional on being
	// the stored one (0: none stored): one keeper wins a race.
	Version int64
	// TTL is the event's (EventConfig.TTL).
	TTL int64
}

// LinePoint is one point of a Line: Count requests queued before At.
type LinePoint struct {
	At, Count int64
}

// lineBucket is how many requests a LineKeeper puts between two points
// at most (more only when they share a millisecond): the place's error
// bound, before points are merged to stay within maxLinePoints.
const lineBucket = 50

// maxLinePoints bounds a Line's points (the item stays near 4 KB); past
// it, the two neighbouring buckets with the fewest requests merge.
const maxLinePoints = 200

// countAt estimates how many requests were queued before t, by linear
// interpolation inside the bucket t falls in, and bounds the estimate's
// error by that bucket's count (on a point, by the larger of the buckets
// beside it). Before the first point it is the first count; at or after
// the last, the last (ok false: t is not measured yet).
func (l *Line) countAt(t int64) (n, bound int64, ok bool) {
	ps := l.Points
	if len(ps) == 0 {
		return 0, 0, false
	}
	if t <= ps[0].At {
		return ps[0].Count, 0, true
	}
	i, found := slices.BinarySearchFunc(ps, t, func(p LinePoint, t int64) int { return cmp.Compare(p.At, t) })
	if found {
		// On a point: the requests of t's own millisecond are in the
		// bucket after it, those of the millisecond before in the one
		// before; either side may hold the true count.
		if i > 0 {
			bound = ps[i].Count - ps[i-1].Count
		}
		if i+1 < len(ps) {
			bound = max(bound, ps[i+1].Count-ps[i].Count)
		}
		return ps[i].Count, bound, i+1 < len(ps)
	}
	if i == len(ps) {
		return ps[len(ps)-1].Count, 0, false
	}
	a, b := ps[i-1], ps[i]
	span := b.Count - a.Count
	return a.Count + span*(t-a.At)/(b.At-a.At), span, true
}

// bucketPoints turns the ascending queuedAt times read from `from` into
// points counted on from base: one at from, then one at the end of every
// lineBucket requests (at a millisecond boundary), one at settled, and
// one at end (after the last time read).
func bucketPoints(from, base int64, times []int64, settled, end int64) []LinePoint {
	out := []LinePoint{{At: from, Count: base}}
	n, inBucket := base, 0
	emit := func(at int64) {
		if last := &out[len(out)-1]; last.At == at {
			last.Count = n
			return
		}
		out = append(out, LinePoint{At: at, Count: n})
		inBucket = 0
	}
	settledDone := settled <= from
	for i, t := range times {
		if !settledDone && t >= settled {
			emit(settled)
			settledDone = true
		}
		n++
		inBucket++
		if inBucket >= lineBucket && (i+1 == len(times) || times[i+1] > t) {
			emit(t + 1)
		}
	}
	if !settledDone {
		emit(settled)
	}
	emit(max(end, out[len(out)-1].At+1))
	return out
}

// mergePoints merges, while there are more than maxLinePoints, the two
// neighbouring buckets with the fewest requests together, keeping the
// first and the last point.
func mergePoints(ps []LinePoint) []LinePoint {
	for len(ps) > maxLinePoints {
		best, bestN := 1, int64(-1)
		for i := 1; i+1 < len(ps); i++ {
			if n := ps[i+1].Count - ps[i-1].Count; bestN < 0 || n < bestN {
				best, bestN = i, n
			}
		}
		ps = slices.Delete(ps, best, best+1)
	}
	return ps
}

// trimBefore drops the points before at, keeping the last one at or
// before it (so that at can still be interpolated).
func trimBefore(ps []LinePoint, at int64) []LinePoint {
	i := 0
	for i+1 < len(ps) && ps[i+1].At <= at {
		i++
	}
	return ps[i:]
}
