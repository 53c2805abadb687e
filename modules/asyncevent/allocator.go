package asyncevent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Allocator is the arrival allocator: it decides the candidates of an
// arrival-ordered FIRST_COME event in (queuedAt, requestId) order, once
// no earlier request can still appear (Allocate), for the events its
// process's Worker made candidates of (Run). Every worker process builds
// one, gives it to its Worker and runs its Run loop; a lease on each event
// makes one allocator decide an event at a time. The API process builds
// none. It is safe for concurrent use.
type Allocator struct {
	cfg AllocatorConfig
	// owner is this allocator's lease owner id.
	owner string
	// kicks carries the events the Worker made candidates of to Run.
	kicks chan string

	mu sync.Mutex
	// allocating holds each event's lease and run lock.
	allocating map[string]*allocState
	late       atomic.Int64
}

// AllocatorConfig configures an Allocator.
type AllocatorConfig struct {
	// Store reads the candidates, takes the events' leases and writes the
	// decisions.
	Store AllocStore

	// AllocLease is how long an allocator holds an event before another
	// may take it over (default 10 s): a crashed allocator delays its
	// event by about this. An allocator whose batches take longer holds it
	// for three batches instead (at most ten AllocLeases), and each
	// written batch renews the lease.
	AllocLease time.Duration
	// AllocEvery is how often Run looks at the events it has seen
	// candidates of (default 200 ms).
	AllocEvery time.Duration
	// WorkerID names the worker process: the allocator's decisions record
	// it on the requests (workerId). Empty records nothing.
	WorkerID string
	// Lateness makes the watermark: the allocator decides only requests
	// queued before now − Lateness.Max. The same in every process (see
	// Lateness).
	Lateness Lateness

	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
	// Observer, if set, hears each decision (for metrics).
	Observer DecisionObserver
}

// withDefaults returns c with every unset field at its default.
func (c AllocatorConfig) withDefaults() AllocatorConfig {
	if c.AllocLease <= 0 {
		c.AllocLease = 10 * time.Second
	}
	if c.AllocEvery <= 0 {
		c.AllocEvery = 200 * time.Millisecond
	}
	c.Lateness = c.Lateness.withDefaults()
	c.Now, c.Log = defaultNow(c.Now), defaultLog(c.Log)
	return c
}

// NewAllocator returns an Allocator over cfg.Store.
func NewAllocator(cfg AllocatorConfig) *Allocator {
	cfg = cfg.withDefaults()
	return &Allocator{cfg: cfg, owner: newID(cfg.Now().UnixMilli()), kicks: make(chan string, 1024), allocating: map[string]*allocState{}}
}

func (al *Allocator) now() int64 { return al.cfg.Now().UnixMilli() }

// MaxAllocBatch is the most requests one allocation transaction decides:
// DynamoDB's 100 items per transaction hold the capacity item and, per
// request, its update and its StatusLog.
const MaxAllocBatch = 49

// Allocation is one batch of in-order decisions of an arrival-ordered
// FIRST_COME event, written as one transaction: the capacity decrement and
// the allocator's new position on the EventCapacity item, on condition
// that the allocator still holds the lease with Fence and was at From, and
// each decision (PROCESSING/ALLOCATING → SUCCEEDED or REJECTED) with its
// StatusLog.
type Allocation struct {
	EventID   string
	Fence     int64
	From, To  Position
	Wins      int64
	Late      int64
	Decisions []*Transition
	// LeaseUntil, when not zero, renews the lease to it (epoch millis) in
	// the same write: an allocator that keeps deciding keeps its event,
	// however slow each batch is, and loses it only by stalling for a
	// whole lease.
	LeaseUntil int64
}

// AllocResult is what one allocator run did.
type AllocResult struct {
	// Decided, Won: requests decided, of which winners.
	Decided, Won int
	// Late counts requests found behind the allocator's position: queued
	// later than Lateness.Max allows. Decided like the others (they win
	// while seats are left), but each may be an inversion once sold out.
	Late int
	// Batches is how many allocation transactions were written.
	Batches int
	// Held: another allocator holds the event; nothing was done.
	Held bool
}

// allocState is one event's state in this allocator.
type allocState struct {
	run   sync.Mutex // one run per event at a time in this process
	fence int64
	// lateChecked is when a run last looked behind the position.
	lateChecked int64
	// batch is how long this allocator's last batch took, from its read
	// to its write's answer, written or fenced (see lease).
	batch time.Duration
}

// lease is how long a run of st's event holds it: AllocLease, or
// three times the last batch's duration when that is longer (up to ten
// leases). A lease shorter than one batch (DynamoDB slow or throttled,
// the process starved of CPU) expired before the batch was written: a
// second allocator took the event and fenced the first, whose run was
// wasted, and so on, while every call got slower. Fencing, not the
// lease, keeps the decisions exact; the lease only says how soon a
// crashed allocator's event is taken over.
func (al *Allocator) lease(st *allocState) time.Duration {
	return min(max(al.cfg.AllocLease, 3*st.batch), 10*al.cfg.AllocLease)
}

func (al *Allocator) allocState(eventID string) *allocState {
	al.mu.Lock()
	defer al.mu.Unlock()
	st := al.allocating[eventID]
	if st == nil {
		st = &allocState{}
		al.allocating[eventID] = st
	}
	return st
}

// LateArrivals is how many late requests this allocator's runs found
// (see AllocResult.Late); the EventCapacity item keeps each event's total
// (Capacity.AllocLate).
func (al *Allocator) LateArrivals() int64 { return al.late.Load() }

// Allocate runs the arrival allocator of a FIRST_COME event once: it takes
// the event's lease, walks the undecided requests in (queuedAt,
// requestId) order from its position up to the watermark now −
// Lateness.Max, makes QUEUED ones candidates itself (their worker may be
// slow or dead), and decides them in order, MaxAllocBatch per transaction:
// winners while seats are left, then REJECTED_CAPACITY. It returns when
// nothing below the watermark is left, and releases the lease.
//
// It is safe to run anywhere and any number of times at once: one holds
// the lease, and every batch is conditional on its fencing token and
// position, so a stale allocator writes nothing.
func (al *Allocator) Allocate(ctx context.Context, eventID string) (AllocResult, error) {
	st := al.allocState(eventID)
	st.run.Lock()
	defer st.run.Unlock()
	var res AllocResult
	now := al.now()
	lease := al.lease(st)
	cp, err := al.cfg.Store.AcquireAllocation(ctx, Lease{EventID: eventID, Owner: al.owner, Now: now, Until: now + lease.Milliseconds()})
	if errors.Is(err, ErrAllocationHeld) {
		res.Held = true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	st.fence = cp.AllocFence
	defer al.releaseLease(ctx, eventID, st)
	pos := Position{cp.AllocQueuedAt, cp.AllocRequestID}
	remaining := cp.CapacityRemaining
	watermark := now - al.cfg.Lateness.Max().Milliseconds()
	// The first pass looks behind the position too, for late requests.
	from := al.lateFrom(st, pos, now)
	// The next batch, read while the current one is written (see below);
	// nil when it is not being read.
	var next chan nextBatch
	defer func() {
		if next != nil {
			<-next // a run returns only once its read is over
		}
	}()
	for ctx.Err() == nil {
		// After half the lease, leave the rest to the next run, under a
		// fresh lease; but decide at least one batch per run, so that an
		// allocator on a slow machine (or behind a slow acquire) still makes
		// progress. A batch written after the lease ran out is fenced.
		if res.Batches > 0 && al.now() > now+lease.Milliseconds()/2 {
			break
		}
		began := time.Now()
		var nb nextBatch
		if next != nil {
			nb, next = <-next, nil
		} else {
			nb.batch, nb.late, nb.err = al.candidates(ctx, eventID, pos, max(from, 0), watermark, nil)
		}
		batch, late, err := nb.batch, nb.late, nb.err
		if err != nil {
			return res, err
		}
		if len(batch) == 0 {
			return res, nil
		}
		a := al.decide(eventID, st.fence, pos, batch, late, &remaining)
		a.LeaseUntil = al.now() + lease.Milliseconds()
		// A full batch is likely followed by another: read it while this
		// one is written, so that the allocator's reads and writes overlap.
		// It starts at this batch's end, and passes over this batch's
		// requests, which the index shows undecided until the write lands.
		// If the write fails, the run ends and the read is dropped (its
		// promotions of QUEUED requests are what any allocator would do).
		if len(batch) == MaxAllocBatch {
			next = al.readAhead(ctx, eventID, a.To, watermark, batch)
		}
		err = al.cfg.Store.Allocate(ctx, a)
		// Fenced or not, the batch took this long: the next run's lease
		// covers it (a run fenced for a short lease takes a longer one).
		st.batch = time.Since(began)
		var se *StateError
		if errors.As(err, &se) {
			// The index showed a request as it no longer is; the next run
			// reads it afresh.
			return res, nil
		}
		if err != nil {
			return res, err
		}
		al.observe(a)
		// The next batch is read from the new position on (not from the
		// old one: that would read this batch's requests again).
		pos, from = a.To, a.To.QueuedAt
		res.add(a, late)
		al.late.Add(int64(late))
	}
	return res, ctx.Err()
}

// releaseLease releases the event's allocation lease held under st's
// fence, even after ctx is cancelled; a failure is only logged (the lease
// expires).
func (al *Allocator) releaseLease(ctx context.Context, eventID string, st *allocState) {
	if err := al.cfg.Store.ReleaseAllocation(context.WithoutCancel(ctx), eventID, al.owner, st.fence); err != nil {
		al.cfg.Log.Warn("asyncevent: could not release the allocation lease", "eventId", eventID, "err", err)
	}
}

// lateFrom is where an allocator run at now starts reading: at its
// position pos, or, to look for late requests, 2 × Lateness.Max behind it,
// at most once per Lateness.Max (each look reads the decided requests of
// that span again).
func (al *Allocator) lateFrom(st *allocState, pos Position, now int64) int64 {
	from := pos.QueuedAt
	if lateness := al.cfg.Lateness.Max().Milliseconds(); now-st.lateChecked >= lateness {
		from -= 2 * lateness
		st.lateChecked = now
	}
	return from
}

// decide is the allocation of batch, read from pos (late of its requests
// were late), under fence: winners in order while seats are left
// (*remaining, taken), then REJECTED_CAPACITY; it ends at the batch's
// furthest position.
func (al *Allocator) decide(eventID string, fence int64, pos Position, batch []*Request, late int, remaining *int64) *Allocation {
	a := &Allocation{EventID: eventID, Fence: fence, From: pos, To: pos, Late: int64(late)}
	for _, r := range batch {
		at := max(al.now(), r.LastChange()+1)
		t := &Transition{
			RequestID: r.RequestID, EventID: eventID, UserID: r.UserID,
			From: []Status{StatusProcessing}, At: at, FinishedAt: at, Attempts: r.Attempts,
			UIPhase: PhaseAllocated, RequirePhase: PhaseAllocating, WorkerID: al.cfg.WorkerID,
		}
		if *remaining > 0 {
			*remaining--
			a.Wins++
			t.To, t.UIResult, t.ResultCode = StatusSucceeded, ResultSuccess, CodeSuccess
		} else {
			t.To, t.UIResult, t.ResultCode = StatusRejected, ResultRejected, CodeRejectedCapacity
		}
		a.Decisions = append(a.Decisions, t)
		if p := PositionOf(r); p.Compare(a.To) > 0 {
			a.To = p
		}
	}
	return a
}

// readAhead starts reading the batch that follows a full one, from pos
// (its end) below watermark, passing over batch's requests, which the
// index shows undecided until its write lands. The read is delivered on
// the channel returned.
func (al *Allocator) readAhead(ctx context.Context, eventID string, pos Position, watermark int64, batch []*Request) chan nextBatch {
	deciding := make(map[string]bool, len(batch))
	for _, r := range batch {
		deciding[r.RequestID] = true
	}
	next := make(chan nextBatch, 1)
	go func() {
		var nb nextBatch
		nb.batch, nb.late, nb.err = al.candidates(ctx, eventID, pos, pos.QueuedAt, watermark, deciding)
		next <- nb
	}()
	return next
}

// observe tells the observer, if it watches decisions, of a'al.
func (al *Allocator) observe(a *Allocation) {
	if al.cfg.Observer == nil {
		return
	}
	for _, t := range a.Decisions {
		al.cfg.Observer.Decided(Decision{EventType: FirstCome, Status: t.To})
	}
}

// add counts the written allocation a (late of its requests were late).
func (r *AllocResult) add(a *Allocation, late int) {
	r.Batches++
	r.Decided += len(a.Decisions)
	r.Won += int(a.Wins)
	r.Late += late
}

// nextBatch is a read of candidates.
type nextBatch struct {
	batch []*Request
	late  int
	err   error
}

// candidates returns the next batch to decide: up to MaxAllocBatch
// undecided requests queued in [from, before) that come after pos, or are
// late (at or before pos), in order, except those in skip (the batch being
// written). QUEUED ones are made candidates first, all at once (see
// promoteAll). A request PROCESSING in another phase is not an arrival
// candidate (the per-message flow decides it) and is passed over.
func (al *Allocator) candidates(ctx context.Context, eventID string, pos Position, from, before int64, skip map[string]bool) ([]*Request, int, error) {
	var read []*Request
	for r, err := range al.cfg.Store.UndecidedRequests(ctx, eventID, from, before) {
		if err != nil {
			return nil, 0, err
		}
		if skip[r.RequestID] || !r.allocatable() {
			continue
		}
		read = append(read, r)
		if len(read) == MaxAllocBatch {
			break
		}
	}
	if err := al.promoteAll(ctx, read); err != nil {
		return nil, 0, err
	}
	var batch []*Request
	late := 0
	for _, r := range read {
		if r == nil || !r.candidate() {
			continue // decided meanwhile, or not an arrival candidate
		}
		if PositionOf(r).Compare(pos) <= 0 {
			late++
		}
		batch = append(batch, r)
	}
	return batch, late, nil
}

// candidate reports whether r is an arrival candidate: PROCESSING in
// uiPhase ALLOCATING, waiting for the allocator.
func (r *Request) candidate() bool {
	return r.Status == StatusProcessing && r.UIPhase == PhaseAllocating
}

// allocatable reports whether the arrival allocator can decide r: QUEUED
// (it makes it a candidate first) or a candidate already.
func (r *Request) allocatable() bool {
	return r.Status == StatusQueued || r.candidate()
}

// promoteAll makes the QUEUED requests of rs candidates (promote), all at
// once, and replaces each with the request as it is now (nil: terminal).
// They are independent conditional writes to different items, so their
// order does not matter (a decision's order is its position, which
// promotion keeps); one after another, a batch behind workers that have
// not reached its messages yet (a spike) took a round trip per request
// before the allocator could decide it.
func (al *Allocator) promoteAll(ctx context.Context, rs []*Request) error {
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		if r.Status == StatusQueued {
			wg.Go(func() { rs[i], errs[i] = al.promote(ctx, r) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// promote makes a QUEUED request a candidate (PROCESSING, ALLOCATING), as
// its worker would, and returns it as it is now: nil if it is terminal.
func (al *Allocator) promote(ctx context.Context, r *Request) (*Request, error) {
	now := max(al.now(), r.LastChange()+1)
	t := candidate(r.RequestID, r.EventID, r.UserID, now, 0, 0, 0)
	t.WorkerID = al.cfg.WorkerID
	err := al.cfg.Store.Transition(ctx, t)
	var se *StateError
	switch {
	case err == nil:
		c := *r
		c.Status, c.UIPhase, c.StartedAt = StatusProcessing, PhaseAllocating, t.StartedAt
		return &c, nil
	case errors.As(err, &se) && se.Current != nil:
		if se.Current.Status.Terminal() {
			return nil, nil
		}
		return se.Current, nil
	}
	return nil, err
}

// candidate is the transition that makes a request an arrival candidate:
// RECEIVED/QUEUED → PROCESSING with uiPhase ALLOCATING. queuedAt, when not
// zero, is recorded if the request has none (it was still RECEIVED), on
// the event's index shards (IndexShards).
func candidate(requestID, eventID, userID string, now, queuedAt int64, attempts, shards int) *Transition {
	return &Transition{
		RequestID: requestID, EventID: eventID, UserID: userID,
		From: []Status{StatusQueued, StatusReceived}, To: StatusProcessing, At: now,
		StartedAt: now, QueuedAt: queuedAt, KeepQueuedAt: true, Attempts: attempts, IndexShards: shards,
		UIPhase: PhaseAllocating, Message: "waiting for allocation",
	}
}

// retryAfter is how long after now a later delivery (see Worker.Process) of an arrival
// candidate queued at queuedAt finds it decided, after `deliveries`
// deliveries of its message so far (receives and continuations): once the
// watermark (now − Lateness.Max) has passed queuedAt and the allocator has
// run (two AllocEvery periods, one for the run and one for its batches);
// at least a second, SQS's granularity. A later delivery that still finds
// the request undecided waits longer, an allocation lease per delivery so
// far: a crashed allocator's event is taken over when its lease expires.
func (al *Allocator) retryAfter(queuedAt int64, deliveries int) time.Duration {
	due := time.Duration(queuedAt-al.now())*time.Millisecond + al.cfg.Lateness.Max() + 2*al.cfg.AllocEvery
	return max(due, time.Duration(deliveries-1)*al.cfg.AllocLease, time.Second)
}

// kick tells this allocator's Run loop that eventID has a new candidate.
func (al *Allocator) kick(eventID string) {
	select {
	case al.kicks <- eventID:
	default: // the loop is behind; the next candidate or redelivery kicks again
	}
}

// Run runs the arrival allocator of every event this process's Worker
// made candidates of, until ctx ends: each such event is allocated
// every AllocEvery until Lateness.Max plus two periods have passed
// since its last candidate (by then every candidate is below the
// watermark) and a run has found nothing left to decide. Every worker process runs one; the lease makes
// one of them allocate an event at a time. A crashed allocator's event is
// taken over when its lease expires, by any worker that gets one of the
// event's messages (redeliveries included: a candidate's message is acked
// only once it is decided).
func (al *Allocator) Run(ctx context.Context) {
	keep := al.cfg.Lateness.Max() + 2*al.cfg.AllocEvery
	runKicked(ctx, al.kicks, al.cfg.AllocEvery, func(id string, last time.Time) bool {
		res, err := al.Allocate(ctx, id)
		if err != nil && ctx.Err() == nil {
			al.cfg.Log.Warn("asyncevent: allocation failed", "eventId", id, "err", err)
		}
		if res.Late > 0 {
			al.cfg.Log.Error("asyncevent: late arrivals behind the allocator", "eventId", id, "late", res.Late)
		}
		// A run that decided something may have left the rest for the
		// next (it stops at half its lease): keep allocating until a run
		// finds nothing, not only for keep after the last candidate, or
		// the rest would wait for a redelivery of its messages (each
		// later one waits an AllocLease longer).
		return time.Since(last) <= keep || err != nil || res.Held || res.Decided > 0
	})
}
