package asyncevent

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Place is where an undecided request stands, as its owner is shown it
// (Query.Place). What it holds depends on the event (Kind):
//
//   - "arrival" (FIRST_COME, ordering arrival): about how many undecided
//     requests are ahead of it in (queuedAt, requestId) order, within
//     ±AheadError as of AsOf; the seats left; when the line before it is
//     complete (OrderedAt: no decision comes sooner) and when its
//     decision is expected at the measured decision rate.
//   - "delivery" (FIRST_COME, ordering delivery): the seats left only,
//     since the queue's delivery order, not arrival, decides.
//   - "lottery": the entries so far and the odds, winners / entries.
type Place struct {
	Kind string
	// Ahead estimates the undecided requests ahead (arrival); the true
	// count as of AsOf is within ±AheadError of it. Measuring: the
	// request was queued after the last measurement, which does not
	// place it yet. Settling: it was queued within Lateness.Max before
	// the measurement, when requests ahead of it may still have been
	// being written: Ahead may then miss those (it only ever shows fewer),
	// until a measurement a Lateness.Max later.
	Ahead, AheadError   int64
	Measuring, Settling bool
	// SeatsLeft is the event's capacity not yet taken (FIRST_COME): for
	// "arrival", as of AsOf, read with the position Ahead counts from (see
	// Line.SeatsLeft), so that the two are of the same moment; for
	// "delivery", as of the place's read.
	SeatsLeft int64
	// OrderedAt is queuedAt + Lateness.Max: the line before the request
	// is complete then, and the allocator decides it no sooner.
	// ExpectedAt is when its decision is expected: the later of OrderedAt
	// and AsOf + Ahead / Rate (0 while no rate is measured).
	OrderedAt, ExpectedAt int64
	// Rate is the allocator's decisions per second, as measured.
	Rate float64
	// Entries counts a lottery's entries so far; Odds is Winners /
	// Entries (at most 1).
	Entries int64
	Winners int
	Odds    float64
	// AsOf is when the line was measured (0: not yet).
	AsOf int64
	// Version names what the place was read from: it changes whenever
	// the place may (an HTTP ETag covers it).
	Version string
}

// WithinSeats reports whether the request may be among the seats left
// (arrival): false only when even the fewest requests it may have ahead
// (Ahead − AheadError, both as of AsOf) take every seat left as of AsOf.
// The allocator decides in line order, so a request that wins had fewer
// undecided requests ahead of it than there were seats left at any moment
// before: false never tells a winner it is out (barring a request ahead
// of it failing rather than taking a seat, or one ahead that was still
// being written: see Settling).
func (p *Place) WithinSeats() bool { return p.SeatsLeft > 0 && p.Ahead-p.AheadError < p.SeatsLeft }

// snapshot is what a Query read of an event's place, kept LineEvery. It
// is never changed once made: a reader holds it without a lock while a
// newer one replaces it.
type snapshot struct {
	read    time.Time
	cfg     *EventConfig
	line    *Line
	cap     *Capacity
	version string
}

// placeEntry is one event's latest snapshot, and the lock its refresh
// takes so that concurrent callers share one read.
type placeEntry struct {
	refresh sync.Mutex
	latest  atomic.Pointer[snapshot]
}

// places keeps each event's snapshot (eventId → *placeEntry). A poll
// takes no lock while its event's snapshot is fresh.
type places struct{ events sync.Map }

func (ps *places) entry(eventID string) *placeEntry {
	if e, ok := ps.events.Load(eventID); ok {
		return e.(*placeEntry)
	}
	e, _ := ps.events.LoadOrStore(eventID, &placeEntry{})
	return e.(*placeEntry)
}

// snapshot returns eventID's snapshot, read again when older than
// LineEvery: the event (through the cache), its line and, for FIRST_COME,
// its capacity item, unless the line holds the seats left (an arrival
// event's, see Line.SeatsLeft). Concurrent callers share one read.
func (q *Query) snapshot(ctx context.Context, eventID string) (*snapshot, error) {
	e := q.places.entry(eventID)
	if s := e.latest.Load(); s != nil && q.cfg.Now().Sub(s.read) < q.cfg.LineEvery {
		return s, nil
	}
	e.refresh.Lock()
	defer e.refresh.Unlock()
	if s := e.latest.Load(); s != nil && q.cfg.Now().Sub(s.read) < q.cfg.LineEvery {
		return s, nil // read by the caller this one waited for
	}
	cfg, err := q.cfg.Cache.get(ctx, q.cfg.Events, eventID)
	if err != nil {
		return nil, err
	}
	line, err := q.cfg.Lines.GetLine(ctx, eventID)
	if err != nil {
		return nil, err
	}
	var c *Capacity
	if cfg.EventType == FirstCome && (line == nil || !line.SeatsKnown) {
		if c, err = q.cfg.Lines.GetCapacity(ctx, eventID); err != nil {
			return nil, err
		}
	}
	s := &snapshot{read: q.cfg.Now(), cfg: cfg, line: line, cap: c, version: "0"}
	if line != nil {
		s.version = strconv.FormatInt(line.MeasuredAt, 36)
	}
	if c != nil {
		s.version += "-" + strconv.FormatInt(c.CapacityRemaining, 36)
	}
	e.latest.Store(s)
	return s, nil
}

// LineVersion is the Version a Place of an eventID request would have
// now: it reads nothing while the event's snapshot is fresh.
func (q *Query) LineVersion(ctx context.Context, eventID string) (string, error) {
	s, err := q.snapshot(ctx, eventID)
	if err != nil {
		return "", err
	}
	return s.version, nil
}

// Place returns where r stands while it is undecided, nil once it is
// decided (or not yet queued). It reads no request: the event's line and
// capacity are read at most once a LineEvery per process (Line; a
// LineKeeper measures it), so a poll stays one read.
func (q *Query) Place(ctx context.Context, r *Request) (*Place, error) {
	if r.Status.Terminal() || r.QueuedAt == 0 || q.cfg.Lines == nil {
		return nil, nil
	}
	s, err := q.snapshot(ctx, r.EventID)
	if err != nil {
		return nil, err
	}
	p := &Place{Version: s.version}
	if s.line != nil {
		p.AsOf = s.line.MeasuredAt
	}
	switch {
	case s.line != nil && s.line.SeatsKnown:
		p.SeatsLeft = s.line.SeatsLeft // as of the line, as Ahead is
	case s.cap != nil:
		p.SeatsLeft = s.cap.CapacityRemaining
	}
	switch {
	case s.cfg.EventType == Lottery:
		p.Kind, p.Winners = "lottery", s.cfg.Winners
		if l := s.line; l != nil && len(l.Points) > 0 {
			p.Entries = l.Points[len(l.Points)-1].Count - l.Points[0].Count
		}
		if p.Entries > 0 {
			p.Odds = min(1, float64(p.Winners)/float64(p.Entries))
		}
	case s.cfg.Ordering == OrderDelivery:
		p.Kind = "delivery"
	default:
		p.Kind = "arrival"
		p.OrderedAt = r.QueuedAt + q.cfg.Lateness.Max().Milliseconds()
		q.arrivalPlace(p, s.line, r)
	}
	return p, nil
}

// arrivalPlace fills p's place in line l for r.
func (q *Query) arrivalPlace(p *Place, l *Line, r *Request) {
	if l == nil {
		p.Measuring = true
		return
	}
	before, bound, ok := l.countAt(r.QueuedAt)
	if !ok {
		p.Measuring = true
		return
	}
	p.Ahead, p.AheadError, p.Rate = max(0, before-l.Through), bound+l.ThroughBound, l.Rate
	p.Settling = r.QueuedAt >= l.Settled
	if l.Rate > 0 {
		p.ExpectedAt = max(p.OrderedAt, l.MeasuredAt+int64(float64(p.Ahead)*1000/l.Rate))
	}
}
