package asyncevent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// placeQuery is a Query that reads the line afresh on every call.
func placeQuery(env *asynceventtest.Env, lateness asyncevent.Lateness) *asyncevent.Query {
	return asyncevent.NewQuery(asyncevent.QueryConfig{Requests: env.Store, Lines: env.Store, Events: env.Store,
		Cache: asyncevent.NewEventCache(-1), LineEvery: time.Nanosecond, Lateness: lateness})
}

// snapshotQuery is a Query that reads the line once, on its first call,
// as an API process does within a second.
func snapshotQuery(env *asynceventtest.Env, lateness asyncevent.Lateness) *asyncevent.Query {
	return asyncevent.NewQuery(asyncevent.QueryConfig{Requests: env.Store, Lines: env.Store, Events: env.Store,
		LineEvery: time.Hour, Lateness: lateness})
}

// keeper measures on every call (LineEvery 1 ns) with lateness.
func keeper(env *asynceventtest.Env, lateness asyncevent.Lateness) *asyncevent.LineKeeper {
	return asyncevent.NewLineKeeper(asyncevent.LineKeeperConfig{Store: env.Store, Events: env.Store,
		Cache: asyncevent.NewEventCache(-1), Lateness: lateness, LineEvery: time.Nanosecond})
}

// checkPlaces checks every undecided request of rs (the event's, in
// index order) queued before upTo: its place is the number of undecided
// requests before it, within the place's own error bound, which is at
// most maxBound. It returns how many it checked.
func checkPlaces(t *testing.T, q *asyncevent.Query, rs []*asyncevent.Request, upTo int64, maxBound int64) int {
	t.Helper()
	ahead, checked := int64(0), 0
	for _, r := range rs {
		if r.Status.Terminal() {
			continue
		}
		if r.QueuedAt < upTo {
			p, err := q.Place(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if p == nil || p.Kind != "arrival" || p.Measuring {
				t.Fatalf("request %d ahead: place %+v, want a measured arrival place", ahead, p)
			}
			if d := p.Ahead - ahead; d < -p.AheadError || d > p.AheadError || p.AheadError > maxBound {
				t.Errorf("request with %d undecided ahead: place %d ±%d (bound at most %d)", ahead, p.Ahead, p.AheadError, maxBound)
			}
			checked++
		}
		ahead++
	}
	return checked
}

// queueLine queues clients × each requests in the arrival event eventID,
// the clients participating concurrently; no worker runs.
func queueLine(t *testing.T, env *asynceventtest.Env, eventID string, clients, each int) {
	t.Helper()
	ingest := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue,
		Lateness: asyncevent.Lateness{WriteTimeout: time.Minute}})
	var wg sync.WaitGroup
	for g := range clients {
		wg.Go(func() {
			for i := range each {
				participate(t, ingest, eventID, fmt.Sprintf("u%d-%02d", g, i))
			}
		})
	}
	wg.Wait()
}

// allocateOneBatch has the allocator decide one batch of eventID (the
// first MaxAllocBatch, or all if fewer) and stop, and returns how many it
// decided.
func allocateOneBatch(env *asynceventtest.Env, eventID string) int {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	store := &fenceStore{AllocStore: env.Store}
	batches := 0
	store.beforeAllocate = func() {
		if batches++; batches == 2 {
			cancel()
		}
	}
	res, _ := allocator(env, store, time.Minute).Allocate(cctx, eventID)
	return res.Decided
}

// A request's place is the count of undecided requests ahead of it, read
// from the measured line within the bound the place states (at most two
// buckets, 100 requests), before the allocator starts and after it
// decided a batch; the rate follows the allocator, and seats left the
// capacity.
func TestPlaceInLine(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	arrivalEvent(t, env, "line", 30)
	queueLine(t, env, "line", 10, 13)
	k := keeper(env, noLateness)
	if _, err := k.Measure(ctx, "line"); err != nil {
		t.Fatal(err)
	}
	rs := env.EventRequests(t, "line")
	if n := checkPlaces(t, snapshotQuery(env, noLateness), rs, time.Now().UnixMilli(), 100); n != 130 {
		t.Fatalf("checked %d places, want 130", n)
	}

	// The allocator decides one batch; the line moves by as many.
	allocateOneBatch(env, "line")
	time.Sleep(20 * time.Millisecond) // a measurement a rate can be taken over
	l, err := k.Measure(ctx, "line")
	if err != nil {
		t.Fatal(err)
	}
	rs = env.EventRequests(t, "line")
	decided := 0
	for _, r := range rs {
		if r.Status.Terminal() {
			decided++
		}
	}
	if decided == 0 || decided == len(rs) || l.Rate <= 0 {
		t.Fatalf("after one batch: %d of %d decided, rate %v: want some decided, a rate", decided, len(rs), l.Rate)
	}
	q := snapshotQuery(env, noLateness)
	checkPlaces(t, q, rs, time.Now().UnixMilli(), 100)
	last := rs[len(rs)-1]
	p, err := q.Place(ctx, last)
	if err != nil {
		t.Fatal(err)
	}
	if p.SeatsLeft != 0 || p.WithinSeats() || p.ExpectedAt < p.OrderedAt || p.OrderedAt != last.QueuedAt+noLateness.Max().Milliseconds() {
		t.Errorf("the last request: %+v; want no seats left (30 taken), not within them, expected after ordered", p)
	}
}

// spikeBound is the most a spike's place may be off: two buckets of 50
// (asyncevent's lineBucket), each closed at a millisecond's end, so each
// may hold up to 15 more: the rest of the 16 clients' requests of its
// last millisecond.
const spikeBound = 2 * (50 + 15)

// spikeLateness is the spike test's: its ingest gives a QUEUED write up
// after 1.5 s, so no index entry appears later than that after its
// queuedAt.
var spikeLateness = asyncevent.Lateness{WriteTimeout: 1500 * time.Millisecond, ClockSkew: -1, IndexLag: -1}

// During a spike the line is measured while requests keep coming: the
// places of requests queued before a measurement's settled time (its
// time − Lateness.Max) are within their bound of a recount once the spike
// is over; those queued later are settling and never show more ahead
// than there are; and the measurement after the spike places every
// request.
func TestPlaceDuringSpike(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	arrivalEvent(t, env, "spike-line", 10)
	ingest := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue, Lateness: spikeLateness})
	k := keeper(env, spikeLateness)
	// 16 clients participate (at most 60 each) until the line has been
	// measured at 2.2, 2.9 and 3.6 s, when the first requests are settled
	// (queued over 1.5 s before) and the spike still goes on.
	begin, stop := time.Now(), make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; i < 60 && !stopped(); i++ {
				participate(t, ingest, "spike-line", fmt.Sprintf("s%02d-%02d", g, i))
			}
		})
	}
	type snap struct {
		line  *asyncevent.Line
		place map[string]*asyncevent.Place
	}
	var snaps []snap
	for _, at := range []time.Duration{2200 * time.Millisecond, 2900 * time.Millisecond, 3600 * time.Millisecond} {
		time.Sleep(time.Until(begin.Add(at)))
		l, err := k.Measure(ctx, "spike-line")
		if err != nil {
			t.Fatal(err)
		}
		s := snap{line: l, place: map[string]*asyncevent.Place{}}
		sq := snapshotQuery(env, spikeLateness)
		for _, r := range env.EventRequests(t, "spike-line") {
			if r.QueuedAt < l.MeasuredAt {
				p, err := sq.Place(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				s.place[r.RequestID] = p
			}
		}
		snaps = append(snaps, s)
	}
	close(stop)
	wg.Wait()
	rs := env.EventRequests(t, "spike-line")
	if after := rs[len(rs)-1].QueuedAt; after <= snaps[len(snaps)-1].line.MeasuredAt {
		t.Fatalf("no request was queued after the last measurement (%d, last queued at %d): it was not taken during a spike", snaps[len(snaps)-1].line.MeasuredAt, after)
	}
	settled := 0
	for _, s := range snaps {
		for i, r := range rs {
			p := s.place[r.RequestID]
			switch {
			case p == nil || p.Measuring:
			case r.QueuedAt < s.line.Settled:
				settled++
				if p.Settling || p.Ahead < int64(i)-p.AheadError || p.Ahead > int64(i)+p.AheadError || p.AheadError > spikeBound {
					t.Errorf("measured at %d (settled %d): request %d of the recount, queued at %d, placed %+v", s.line.MeasuredAt, s.line.Settled, i, r.QueuedAt, p)
				}
			case !p.Settling || p.Ahead > int64(i)+p.AheadError:
				t.Errorf("measured at %d (settled %d): settling request %d of the recount placed %+v", s.line.MeasuredAt, s.line.Settled, i, p)
			}
		}
	}
	if settled == 0 {
		t.Fatalf("%d measurements during the spike placed no settled request: no request was queued 1.5 s before one (%d requests in all)", len(snaps), len(rs))
	}
	t.Logf("%d measurements during the spike; %d settled places checked", len(snaps), settled)
	time.Sleep(spikeLateness.Max())
	if _, err := k.Measure(ctx, "spike-line"); err != nil {
		t.Fatal(err)
	}
	checkPlaces(t, snapshotQuery(env, spikeLateness), rs, time.Now().UnixMilli(), spikeBound)
}

// A lottery entry is shown the entries so far and the odds; a request of
// a delivery-ordered event the seats left, and no line is kept for it.
func TestPlaceOfLotteryAndDelivery(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lot-line", EventType: asyncevent.Lottery, Winners: 4,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	firstCome(t, env, "deliv-line", 7)
	for i := range 10 {
		participate(t, env.Ingest, "lot-line", fmt.Sprintf("l%02d", i))
		participate(t, env.Ingest, "deliv-line", fmt.Sprintf("d%02d", i))
	}
	k, q := keeper(env, noLateness), placeQuery(env, noLateness)
	if _, err := k.Measure(ctx, "lot-line"); err != nil {
		t.Fatal(err)
	}
	if l, err := k.Measure(ctx, "deliv-line"); err != nil || l != nil {
		t.Fatalf("a delivery event's line: %+v, %v; want none", l, err)
	}
	for _, c := range []struct {
		event string
		want  asyncevent.Place
	}{
		{"lot-line", asyncevent.Place{Kind: "lottery", Entries: 10, Winners: 4, Odds: 0.4}},
		{"deliv-line", asyncevent.Place{Kind: "delivery", SeatsLeft: 7}},
	} {
		r := env.EventRequests(t, c.event)[3]
		p, err := q.Place(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if p == nil || p.Kind != c.want.Kind || p.Entries != c.want.Entries || p.Winners != c.want.Winners || p.Odds != c.want.Odds || p.SeatsLeft != c.want.SeatsLeft {
			t.Errorf("%s: place %+v, want %+v", c.event, p, c.want)
		}
	}
	if line, err := env.Store.GetLine(ctx, "deliv-line"); err != nil || line != nil {
		t.Errorf("a delivery event's stored line: %+v, %v; want none", line, err)
	}
}

// Polls read an event's place while its snapshot is being replaced
// (LineEvery 1 ns: every call refreshes it): each holds a snapshot no one
// changes (-race catches a reader and a refresh touching one), and every
// place is whole.
func TestPlaceSnapshotsUnderConcurrentPolls(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	arrivalEvent(t, env, "polls", 5)
	ingest := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue,
		Lateness: asyncevent.Lateness{WriteTimeout: time.Minute}})
	for i := range 3 {
		participate(t, ingest, "polls", fmt.Sprintf("u%d", i))
	}
	if _, err := keeper(env, noLateness).Measure(ctx, "polls"); err != nil {
		t.Fatal(err)
	}
	rs := env.EventRequests(t, "polls")
	q := asyncevent.NewQuery(asyncevent.QueryConfig{Requests: env.Store, Lines: env.Store, Events: env.Store,
		LineEvery: time.Nanosecond, Lateness: noLateness})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				r := rs[(g+i)%len(rs)]
				p, err := q.Place(ctx, r)
				if err != nil {
					t.Error(err)
					return
				}
				if p == nil || p.Kind != "arrival" || p.SeatsLeft != 5 || p.Version == "" {
					t.Errorf("place of %s: %+v", r.RequestID, p)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A place shows the requests ahead and the seats left as of the same
// moment, its line's: when the allocator decides a batch after the line
// was measured, a request polled before the next measurement is shown the
// seats left when the requests ahead were counted, not the fewer left
// after those decisions. So withinSeats never tells a winner it is out.
func TestPlaceSeatsAreAsOfItsLine(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	const capacity = 60
	arrivalEvent(t, env, "asof", capacity)
	queueLine(t, env, "asof", 8, 10)
	line, err := keeper(env, noLateness).Measure(ctx, "asof")
	if err != nil {
		t.Fatal(err)
	}
	// One batch is decided, and the line is not measured again.
	if n := allocateOneBatch(env, "asof"); n != asyncevent.MaxAllocBatch {
		t.Fatalf("the allocator decided %d, want one batch of %d", n, asyncevent.MaxAllocBatch)
	}
	q := snapshotQuery(env, noLateness)
	places := map[string]*asyncevent.Place{}
	for _, r := range env.EventRequests(t, "asof") {
		if r.Status.Terminal() {
			continue
		}
		p, err := q.Place(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if p == nil || p.Measuring || p.AsOf != line.MeasuredAt || p.SeatsLeft != capacity {
			t.Fatalf("place %+v, want one measured as of the line (%d), with the %d seats left then", p, line.MeasuredAt, capacity)
		}
		places[r.RequestID] = p
	}
	if _, err := allocator(env, env.Store, time.Minute).Allocate(ctx, "asof"); err != nil {
		t.Fatal(err)
	}
	winners := 0
	for _, r := range env.EventRequests(t, "asof") {
		p := places[r.RequestID]
		if p == nil || r.Status != asyncevent.StatusSucceeded {
			continue
		}
		winners++
		if !p.WithinSeats() {
			t.Errorf("a winner was placed %d ±%d ahead of %d seats: told it is out", p.Ahead, p.AheadError, p.SeatsLeft)
		}
	}
	if winners != capacity-asyncevent.MaxAllocBatch {
		t.Fatalf("%d winners were undecided when placed, want %d", winners, capacity-asyncevent.MaxAllocBatch)
	}
}

// WithinSeats is false only when even the fewest the request may have
// ahead take every seat left: the winner, placed 53 ±50 ahead of
// 51 seats (both as of the line) while 49 were ahead, is not told it is
// out.
func TestWithinSeats(t *testing.T) {
	for _, c := range []struct {
		ahead, bound, seats int64
		want                bool
	}{
		{53, 50, 51, true},
		{49, 0, 51, true},
		{53, 2, 51, false},
		{51, 0, 51, false},
		{0, 0, 0, false},
		{0, 10, 0, false},
		{60, 10, 51, true},
		{61, 10, 51, false},
	} {
		p := asyncevent.Place{Kind: "arrival", Ahead: c.ahead, AheadError: c.bound, SeatsLeft: c.seats}
		if got := p.WithinSeats(); got != c.want {
			t.Errorf("%d ±%d ahead of %d seats: within %v, want %v", c.ahead, c.bound, c.seats, got, c.want)
		}
	}
}
