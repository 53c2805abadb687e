package asyncevent

import (
	"context"
	"errors"
	"iter"
	"sync"
	"time"
)

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

// AllocStore is what the arrival allocator needs.
type AllocStore interface {
	Transitioner
	// AcquireAllocation takes eventID's allocation lease for owner until
	// `until` (epoch millis) if it is released or expired at now, with the
	// next fencing token. It returns the capacity item after the write.
	// ErrAllocationHeld if another holds it; ErrEventNotFound if the event
	// has no capacity item.
	AcquireAllocation(ctx context.Context, eventID, owner string, now, until int64) (*Capacity, error)
	// ReleaseAllocation ends owner's lease if it still holds it with fence.
	ReleaseAllocation(ctx context.Context, eventID, owner string, fence int64) error
	// UndecidedRequests iterates, in (queuedAt, requestId) order, over the
	// event's QUEUED and PROCESSING requests whose queuedAt is in
	// [from, before).
	UndecidedRequests(ctx context.Context, eventID string, from, before int64) iter.Seq2[*Request, error]
	// Allocate writes a in one transaction. ErrAllocationFenced if the
	// lease or the position changed; *StateError if a request is no
	// longer the candidate the allocator read.
	Allocate(ctx context.Context, a *Allocation) error
}

// AllocResult is what one allocator run did.
type AllocResult struct {
	// Decided, Won: requests decided, of which winners.
	Decided, Won int
	// Late counts requests found behind the allocator's position: queued
	// later than MaxLateness allows. Decided like the others (they win
	// while seats are left), but each may be an inversion once sold out.
	Late int
	// Batches is how many allocation transactions were written.
	Batches int
	// Held: another allocator holds the event; nothing was done.
	Held bool
}

// allocState is one event's allocator state in this service.
type allocState struct {
	run   sync.Mutex // one run per event at a time in this process
	fence int64
	// lateChecked is when a run last looked behind the position.
	lateChecked int64
	// batch is how long this service's last batch took, from its read
	// to its write's answer, written or fenced (see lease).
	batch time.Duration
}

// lease is how long a run of st's event holds it: Config.AllocLease, or
// three times the last batch's duration when that is longer (up to ten
// leases). A lease shorter than one batch (DynamoDB slow or throttled,
// the process starved of CPU) expired before the batch was written: a
// second allocator took the event and fenced the first, whose run was
// wasted, and so on, while every call got slower. Fencing, not the
// lease, keeps the decisions exact; the lease only says how soon a
// crashed allocator's event is taken over.
func (s *Service) lease(st *allocState) time.Duration {
	return min(max(s.cfg.AllocLease, 3*st.batch), 10*s.cfg.AllocLease)
}

func (s *Service) allocState(eventID string) *allocState {
	s.allocMu.Lock()
	defer s.allocMu.Unlock()
	st := s.allocating[eventID]
	if st == nil {
		st = &allocState{}
		s.allocating[eventID] = st
	}
	return st
}

// LateArrivals is how many late requests this service's allocator runs
// found (see AllocResult.Late); the EventCapacity item keeps each event's
// total (Capacity.AllocLate).
func (s *Service) LateArrivals() int64 { return s.late.Load() }

// QueuedAtUnsure is how many of this service's queuedAt writes (ingest's
// RECEIVED → QUEUED, a worker's RECEIVED → PROCESSING) failed other than
// by their condition: at WriteTimeout, or on a broken connection. Such a
// write may still land, and land later than MaxLateness allows, so each
// may become one late arrival; every late arrival comes from one. A
// process starved of CPU for longer than WriteTimeout is the usual cause.
func (s *Service) QueuedAtUnsure() int64 { return s.unsure.Load() }

// Allocate runs the arrival allocator of a FIRST_COME event once: it takes
// the event's lease, walks the undecided requests in (queuedAt,
// requestId) order from its position up to the watermark now −
// MaxLateness, makes QUEUED ones candidates itself (their worker may be
// slow or dead), and decides them in order, MaxAllocBatch per transaction:
// winners while seats are left, then REJECTED_CAPACITY. It returns when
// nothing below the watermark is left, and releases the lease.
//
// It is safe to run anywhere and any number of times at once: one holds
// the lease, and every batch is conditional on its fencing token and
// position, so a stale allocator writes nothing.
func (s *Service) Allocate(ctx context.Context, eventID string) (AllocResult, error) {
	st := s.allocState(eventID)
	st.run.Lock()
	defer st.run.Unlock()
	var res AllocResult
	now := s.now()
	lease := s.lease(st)
	cp, err := s.store.AcquireAllocation(ctx, eventID, s.owner, now, now+lease.Milliseconds())
	if errors.Is(err, ErrAllocationHeld) {
		res.Held = true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	st.fence = cp.AllocFence
	defer s.releaseLease(ctx, eventID, st)
	pos := Position{cp.AllocQueuedAt, cp.AllocRequestID}
	remaining := cp.CapacityRemaining
	watermark := now - s.cfg.MaxLateness().Milliseconds()
	// The first pass looks behind the position too, for late requests.
	from := s.lateFrom(st, pos, now)
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
		if res.Batches > 0 && s.now() > now+lease.Milliseconds()/2 {
			break
		}
		began := time.Now()
		var nb nextBatch
		if next != nil {
			nb, next = <-next, nil
		} else {
			nb.batch, nb.late, nb.err = s.candidates(ctx, eventID, pos, max(from, 0), watermark, nil)
		}
		batch, late, err := nb.batch, nb.late, nb.err
		if err != nil {
			return res, err
		}
		if len(batch) == 0 {
			return res, nil
		}
		a := s.decide(eventID, st.fence, pos, batch, late, &remaining)
		a.LeaseUntil = s.now() + lease.Milliseconds()
		// A full batch is likely followed by another: read it while this
		// one is written, so that the allocator's reads and writes overlap.
		// It starts at this batch's end, and passes over this batch's
		// requests, which the index shows undecided until the write lands.
		// If the write fails, the run ends and the read is dropped (its
		// promotions of QUEUED requests are what any allocator would do).
		if len(batch) == MaxAllocBatch {
			next = s.readAhead(ctx, eventID, a.To, watermark, batch)
		}
		err = s.store.Allocate(ctx, a)
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
		s.observe(a)
		// The next batch is read from the new position on (not from the
		// old one: that would read this batch's requests again).
		pos, from = a.To, a.To.QueuedAt
		res.add(a, late)
		s.late.Add(int64(late))
	}
	return res, ctx.Err()
}

// releaseLease releases the event's allocation lease held under st's
// fence, even after ctx is cancelled; a failure is only logged (the lease
// expires).
func (s *Service) releaseLease(ctx context.Context, eventID string, st *allocState) {
	if err := s.store.ReleaseAllocation(context.WithoutCancel(ctx), eventID, s.owner, st.fence); err != nil {
		s.cfg.Log.Warn("asyncevent: could not release the allocation lease", "eventId", eventID, "err", err)
	}
}

// lateFrom is where an allocator run at now starts reading: at its
// position pos, or, to look for late requests, 2 × MaxLateness behind it,
// at most once per MaxLateness (each look reads the decided requests of
// that span again).
func (s *Service) lateFrom(st *allocState, pos Position, now int64) int64 {
	from := pos.QueuedAt
	if lateness := s.cfg.MaxLateness().Milliseconds(); now-st.lateChecked >= lateness {
		from -= 2 * lateness
		st.lateChecked = now
	}
	return from
}

// decide is the allocation of batch, read from pos (late of its requests
// were late), under fence: winners in order while seats are left
// (*remaining, taken), then REJECTED_CAPACITY; it ends at the batch's
// furthest position.
func (s *Service) decide(eventID string, fence int64, pos Position, batch []*Request, late int, remaining *int64) *Allocation {
	a := &Allocation{EventID: eventID, Fence: fence, From: pos, To: pos, Late: int64(late)}
	for _, r := range batch {
		at := max(s.now(), r.LastChange()+1)
		t := &Transition{
			RequestID: r.RequestID, EventID: eventID, UserID: r.UserID,
			From: []Status{StatusProcessing}, At: at, FinishedAt: at, Attempts: r.Attempts,
			UIPhase: PhaseAllocated, RequirePhase: PhaseAllocating, WorkerID: s.cfg.WorkerID,
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
func (s *Service) readAhead(ctx context.Context, eventID string, pos Position, watermark int64, batch []*Request) chan nextBatch {
	deciding := make(map[string]bool, len(batch))
	for _, r := range batch {
		deciding[r.RequestID] = true
	}
	next := make(chan nextBatch, 1)
	go func() {
		var nb nextBatch
		nb.batch, nb.late, nb.err = s.candidates(ctx, eventID, pos, pos.QueuedAt, watermark, deciding)
		next <- nb
	}()
	return next
}

// observe tells the observer, if it watches decisions, of a's.
func (s *Service) observe(a *Allocation) {
	if o, ok := s.cfg.Observer.(DecisionObserver); ok {
		for _, t := range a.Decisions {
			o.Decided(Decision{EventType: FirstCome, Status: t.To})
		}
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
func (s *Service) candidates(ctx context.Context, eventID string, pos Position, from, before int64, skip map[string]bool) ([]*Request, int, error) {
	var read []*Request
	for r, err := range s.store.UndecidedRequests(ctx, eventID, from, before) {
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
	if err := s.promoteAll(ctx, read); err != nil {
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
func (s *Service) promoteAll(ctx context.Context, rs []*Request) error {
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		if r.Status == StatusQueued {
			wg.Go(func() { rs[i], errs[i] = s.promote(ctx, r) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// promote makes a QUEUED request a candidate (PROCESSING, ALLOCATING), as
// its worker would, and returns it as it is now: nil if it is terminal.
func (s *Service) promote(ctx context.Context, r *Request) (*Request, error) {
	now := max(s.now(), r.LastChange()+1)
	t := candidate(r.RequestID, r.EventID, r.UserID, now, 0, 0, 0)
	err := s.transition(ctx, t)
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

// kick tells this service's allocator loop that eventID has a new
// candidate.
func (s *Service) kick(eventID string) {
	select {
	case s.kicks <- eventID:
	default: // the loop is behind; the next candidate or redelivery kicks again
	}
}

// RunAllocator runs the arrival allocator of every event this service's
// worker made candidates of, until ctx ends: each such event is allocated
// every Config.AllocEvery until MaxLateness plus two periods have passed
// since its last candidate (by then every candidate is below the
// watermark) and a run has found nothing left to decide. Every worker process runs one; the lease makes
// one of them allocate an event at a time. A crashed allocator's event is
// taken over when its lease expires, by any worker that gets one of the
// event's messages (redeliveries included: a candidate's message is acked
// only once it is decided).
func (s *Service) RunAllocator(ctx context.Context) {
	tick := time.NewTicker(s.cfg.AllocEvery)
	defer tick.Stop()
	active := map[string]time.Time{}
	keep := s.cfg.MaxLateness() + 2*s.cfg.AllocEvery
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-s.kicks:
			active[id] = time.Now()
			continue
		case <-tick.C:
		}
		for id, last := range active {
			res, err := s.Allocate(ctx, id)
			if err != nil && ctx.Err() == nil {
				s.cfg.Log.Warn("asyncevent: allocation failed", "eventId", id, "err", err)
			}
			if res.Late > 0 {
				s.cfg.Log.Error("asyncevent: late arrivals behind the allocator", "eventId", id, "late", res.Late)
			}
			// A run that decided something may have left the rest for the
			// next (it stops at half its lease): keep allocating until a run
			// finds nothing, not only for keep after the last candidate, or
			// the rest would wait for a redelivery of its messages (each
			// later one waits an AllocLease longer).
			if time.Since(last) > keep && err == nil && !res.Held && res.Decided == 0 {
				delete(active, id)
			}
		}
	}
}
