package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// The lock-expiry jobs of events closed early (asyncevent.ExpireLocks) are
// listed in one base-table partition, like the open events: written in the
// close's transaction, updated by the worker that holds a job's lease after
// each page, kept a week after the job finished.
//
//	LockJob  EVENTS#LOCKJOBS / EVENT#<eventId>
const lockJobPK = "EVENTS#LOCKJOBS"

// LockJobItem is a LockJob item.
type LockJobItem struct {
	EventID    string `dynamodbav:"eventId"`
	LockTTL    int64  `dynamodbav:"lockTtl"`
	CreatedAt  int64  `dynamodbav:"createdAt"`
	Cursor     string `dynamodbav:"cursor,omitempty"`
	Done       int64  `dynamodbav:"done"`
	Owner      string `dynamodbav:"owner,omitempty"`
	LeaseUntil int64  `dynamodbav:"leaseUntil,omitempty"`
	FinishedAt int64  `dynamodbav:"finishedAt,omitempty"`
	TTL        int64  `dynamodbav:"ttl,omitempty"`
}

// lockJobCursorKey seals the cursors a lock job keeps in its item. Those
// never leave the table (no client sees them), and every worker must open
// them, whatever its own CursorKey: a fixed key is what that needs.
var lockJobCursorKey = []byte("pacer asyncevent lock job walk cursors, server-side")

// LockJobPage implements asyncevent.LockJobStore: EventRequests, with
// cursors any worker opens.
func (s *Store) LockJobPage(ctx context.Context, eventID string, limit int, cursor string) ([]*asyncevent.Request, string, error) {
	return s.walker.EventRequests(ctx, asyncevent.EventRequestsQuery{EventID: eventID, Limit: limit, Cursor: cursor})
}

func lockJobKey(eventID string) ddb.Key { return ddb.Key{PK: lockJobPK, SK: openSK.Build(eventID)} }

// finishedJobTTL is how long a finished job's item is kept.
const finishedJobTTL = 7 * 24 * time.Hour

// CloseEvent implements asyncevent.EventStore: the config's move, the open
// events' entry and the job, in one transaction.
func (s *Store) CloseEvent(ctx context.Context, eventID string, at int64, job *asyncevent.LockJob) error {
	u := ddb.Transition(s.configs, configKey(eventID), eventMachine, asyncevent.EventClosed, asyncevent.EventOpen).
		Set("updatedAt", at).Label("event")
	it := LockJobItem(*job)
	err := s.db.Transact(ctx, u.Op(), s.open.Delete(openKey(eventID)), s.lockJobs.Put(&it))
	var te *ddb.TxError
	if errors.As(err, &te) {
		if r := te.Reason("event"); r != nil {
			return eventStateErr(eventID, r.Item != nil, r.Decode)
		}
	}
	return err
}

// LockJobs implements asyncevent.LockJobStore with a Query of the jobs'
// partition.
func (s *Store) LockJobs(ctx context.Context) iter.Seq2[*asyncevent.LockJob, error] {
	return func(yield func(*asyncevent.LockJob, error) bool) {
		for it, err := range s.lockJobs.Query("", lockJobPK).Limit(ddb.MaxPageSize).All(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			if it.FinishedAt == 0 {
				j := asyncevent.LockJob(*it)
				if !yield(&j, nil) {
					return
				}
			}
		}
	}
}

// LeaseLockJob implements asyncevent.LockJobStore.
func (s *Store) LeaseLockJob(ctx context.Context, l asyncevent.Lease) (*asyncevent.LockJob, error) {
	eventID, owner, now, until := l.EventID, l.Owner, l.Now, l.Until
	lease := expression.Name("leaseUntil")
	var it LockJobItem
	err := s.lockJobs.Update(lockJobKey(eventID)).Set("owner", owner).Set("leaseUntil", until).
		MustExist().
		If(expression.AttributeNotExists(expression.Name("finishedAt"))).
		If(expression.AttributeNotExists(lease).Or(lease.LessThan(expression.Value(now))).
			Or(expression.Name("owner").Equal(expression.Value(owner)))).
		Label("lock job").RunNew(ctx, &it)
	var ce *ddb.ConditionError
	if errors.As(err, &ce) {
		var cur LockJobItem
		if !ce.Exists() || ce.Decode(&cur) != nil || cur.FinishedAt != 0 {
			return nil, fmt.Errorf("%w: %s", asyncevent.ErrLockJobNotFound, eventID)
		}
		return nil, fmt.Errorf("%w: %s's lock job is %s's until %d", asyncevent.ErrLeased, eventID, cur.Owner, cur.LeaseUntil)
	}
	if err != nil {
		return nil, err
	}
	j := asyncevent.LockJob(it)
	return &j, nil
}

// SaveLockJob implements asyncevent.LockJobStore.
func (s *Store) SaveLockJob(ctx context.Context, p asyncevent.LockJobProgress) error {
	eventID, owner, cursor, done, until, finished := p.EventID, p.Owner, p.Cursor, p.Done, p.Until, p.Finished
	u := s.lockJobs.Update(lockJobKey(eventID)).Set("done", done).Set("leaseUntil", until).
		If(expression.Name("owner").Equal(expression.Value(owner))).
		If(expression.AttributeNotExists(expression.Name("finishedAt")))
	if cursor != "" {
		u.Set("cursor", cursor)
	} else {
		u.Remove("cursor")
	}
	if finished {
		now := time.Now()
		u.Set("finishedAt", now.UnixMilli()).Set("ttl", now.Add(finishedJobTTL).Unix())
	}
	err := u.Label("lock job").Run(ctx)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return fmt.Errorf("%w: %s's lock job", asyncevent.ErrLeased, eventID)
	}
	return err
}

// ShortenLock implements asyncevent.LockJobStore.
func (s *Store) ShortenLock(ctx context.Context, eventID, userID string, ttl int64) (bool, error) {
	cur := expression.Name("ttl")
	err := s.locks.Update(lockKey(eventID, userID)).Set("ttl", ttl).
		MustExist().
		If(expression.AttributeNotExists(cur).Or(cur.GreaterThan(expression.Value(ttl)))).
		Label("lock").Run(ctx)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return false, nil
	}
	return err == nil, err
}
