package ddb

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// retrier returns a capped exponential backoff with jitter: the SDK's one
// backoff, for unprocessed batch items and for writes that lost a race.
func (db *DB) retrier() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = db.cfg.BatchBackoff
	b.MaxInterval = db.cfg.BatchBackoffMax
	b.RandomizationFactor = 0.5
	b.Multiplier = 2
	b.Reset()
	return b
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retry calls try until it succeeds or fails with an error again refuses,
// calling it at most Config.TxConflictRetries more times, with the backoff
// between calls. It returns try's last error, joined with ctx's if ctx
// ends during a wait.
func (db *DB) retry(ctx context.Context, again func(error) bool, try func() error) error {
	bo := db.retrier()
	for attempt := 0; ; attempt++ {
		err := try()
		if err == nil || !again(err) || attempt >= db.cfg.TxConflictRetries {
			return err
		}
		if serr := sleep(ctx, bo.NextBackOff()); serr != nil {
			return errors.Join(err, serr)
		}
	}
}

// RetryConditional runs an optimistic write: try reads an item and writes
// it on condition that it has not changed since the read. While try fails
// because a condition did not hold (errors.Is(err, ErrConditionFailed):
// another writer got there first), it is called again, to read afresh, up
// to Config.TxConflictRetries more times, with the batch backoff between
// calls. It returns try's last error, joined with ctx's if ctx ends during
// a wait.
func (db *DB) RetryConditional(ctx context.Context, try func() error) error {
	return db.retry(ctx, func(err error) bool { return errors.Is(err, ErrConditionFailed) }, try)
}
