package asyncevent

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// An event's IdempotencyLocks live until the event's end + LockTTLAfter,
// so that no lock expires while the event takes participations. When an
// admin closes a FIRST_COME event early (Admin.CloseEvent), that end may
// be months away (MaxEventLifetime): the close also records a LockJob, and
// the workers (Operations.ExpireLocks) bring every lock of the event down to the
// close + LockTTLAfter, paced, resuming where a crashed worker stopped.

// LockJob is the work of bringing a closed event's locks' TTL down.
type LockJob struct {
	EventID string
	// LockTTL is the TTL (epoch seconds) the event's locks get: the close
	// + LockTTLAfter.
	LockTTL int64
	// CreatedAt is when the event was closed (epoch millis).
	CreatedAt int64
	// Cursor is where the walk of the event's requests stands (a cursor of
	// RequestReader.EventRequests; "" before the first page).
	Cursor string
	// Done counts the requests whose lock the job has seen so far.
	Done int64
	// Owner and LeaseUntil (epoch millis) name the worker working on it.
	Owner      string
	LeaseUntil int64
	// FinishedAt is when the walk ended (0 until then).
	FinishedAt int64
	// TTL (epoch seconds) removes the job item: the event's, or a week
	// after it finished.
	TTL int64
}

// LockExpiry reports an ExpireLocks run.
type LockExpiry struct {
	// Jobs counts the jobs this run worked on; Leased those another worker
	// held; Finished those it finished.
	Jobs, Leased, Finished int
	// Shortened counts the locks whose TTL it brought down.
	Shortened int64
}

// lockJobPage is how many requests a lock job reads and saves at a time.
const lockJobPage = 100

// lockJobDelay is how long after the close a job waits before its walk:
// another API process may still admit a participation for its event
// cache's TTL (seconds: EventCache) after the close, and the indexes lag.
// A request listed newest first after the walk began would be missed.
const lockJobDelay = time.Minute

// ExpireLocks works through the lock jobs of events closed early: for each
// job no other worker holds, closed at least a minute ago (lockJobDelay),
// it takes the job's lease (OperationsConfig.LockJobLease plus a page's
// time at the paced rate, renewed after every page), walks the event's
// requests (the admin list's pages, not-queued ones included) from where
// the job stands and brings each request's lock down to the job's TTL, at
// most OperationsConfig.LockExpiryRate writes a second, saving its place
// after each page of 100. A worker that dies mid-job leaves the job to
// the next run once its lease is over, from the last saved page (its
// locks written twice at most: the write is idempotent). Every worker
// runs it with its sweep.
func (o *Operations) ExpireLocks(ctx context.Context) (LockExpiry, error) {
	var res LockExpiry
	owner := o.cfg.WorkerID
	if owner == "" {
		owner = newID(o.now()) // unique: a lease must tell processes apart
	}
	var jobs []*LockJob
	for j, err := range o.cfg.LockJobs.LockJobs(ctx) {
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		jobs = append(jobs, j)
	}
	var errs []error
	for _, j := range jobs {
		if o.now() < j.CreatedAt+lockJobDelay.Milliseconds() {
			continue
		}
		n, finished, err := o.expireLocks(ctx, j.EventID, owner)
		res.Shortened += n
		switch {
		case errors.Is(err, ErrLeased):
			res.Leased++
			continue
		case errors.Is(err, ErrLockJobNotFound):
			continue
		case ctx.Err() != nil:
			return res, ctx.Err()
		case err != nil:
			// On to the next job: this one is tried again next time.
			errs = append(errs, fmt.Errorf("lock job of %s: %w", j.EventID, err))
			continue
		}
		res.Jobs++
		if finished {
			res.Finished++
		}
	}
	return res, errors.Join(errs...)
}

// expireLocks runs one job as owner: see ExpireLocks.
func (o *Operations) expireLocks(ctx context.Context, eventID, owner string) (shortened int64, finished bool, err error) {
	interval := time.Second / time.Duration(max(o.cfg.LockExpiryRate, 1))
	// A lease outlasts a page at the paced rate.
	lease := o.cfg.LockJobLease + lockJobPage*interval
	now := o.now()
	j, err := o.cfg.LockJobs.LeaseLockJob(ctx, Lease{EventID: eventID, Owner: owner, Now: now, Until: now + lease.Milliseconds()})
	if err != nil {
		return 0, false, err
	}
	next := time.Now()
	cursor, done := j.Cursor, j.Done
	for {
		rs, after, err := o.cfg.LockJobs.LockJobPage(ctx, eventID, lockJobPage, cursor)
		if errors.Is(err, ErrCursor) && cursor != "" {
			// A place this version cannot read: walk again from the start
			// (each lock is written once in effect: ShortenLock's condition).
			o.cfg.Log.Warn("asyncevent: a lock job's saved place is unreadable; walking from the start", "eventId", eventID, "err", err)
			cursor = ""
			continue
		}
		if err != nil {
			return shortened, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		for _, r := range rs {
			if d := time.Until(next); d > 0 {
				select {
				case <-ctx.Done():
					return shortened, false, ctx.Err()
				case <-time.After(d):
				}
			}
			if now := time.Now(); now.After(next) {
				next = now
			}
			next = next.Add(interval)
			wrote, err := o.cfg.LockJobs.ShortenLock(ctx, eventID, r.UserID, j.LockTTL)
			if err != nil {
				return shortened, false, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			if wrote {
				shortened++
			}
		}
		cursor, done = after, done+int64(len(rs))
		now := o.now()
		if err := o.cfg.LockJobs.SaveLockJob(ctx, LockJobProgress{EventID: eventID, Owner: owner, Cursor: cursor, Done: done,
			Until: now + lease.Milliseconds(), Finished: cursor == ""}); err != nil {
			return shortened, false, err
		}
		if cursor == "" {
			o.cfg.Log.Info("asyncevent: locks of a closed event brought down to the close", "eventId", eventID, "requests", done, "shortened", shortened)
			return shortened, true, nil
		}
	}
}
