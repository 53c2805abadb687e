package asynceventworker

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// sweep calls ops.SweepStranded periodically (see periodically). A failed
// sweep is logged and tried again at the next tick: the sweep is
// idempotent.
func sweep(ctx context.Context, ops *asyncevent.Operations, every time.Duration, log *slog.Logger) {
	periodically(ctx, every, func() {
		res, err := ops.SweepStranded(ctx, asyncevent.SweepOptions{})
		switch {
		case ctx.Err() != nil:
		case err != nil:
			log.Warn("asyncevent-worker: sweep failed; trying again at the next interval", "err", err, "every", every)
		case res.Stranded > 0 || res.FailedEnqueue > 0:
			// failedEnqueue > 0 repeats every interval until an operator
			// re-queues them (POST /admin/requests/sweep?failedEnqueue=requeue).
			log.Info("asyncevent-worker: swept", "stranded", res.Stranded, "requeued", res.Requeued,
				"failedEnqueue", res.FailedEnqueue)
		default:
			log.Debug("asyncevent-worker: swept, nothing stranded")
		}
	})
}

// lockJobs calls ops.ExpireLocks periodically, in a loop of its own: a
// long job (17 minutes for 100,000 requests at the default pace) must not
// hold up the sweep. The jobs' leases keep two workers off one job.
func lockJobs(ctx context.Context, ops *asyncevent.Operations, every time.Duration, log *slog.Logger) {
	periodically(ctx, every, func() {
		ex, err := ops.ExpireLocks(ctx)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			log.Warn("asyncevent-worker: lock expiry failed; trying again at the next interval", "err", err, "every", every)
		case ex.Jobs > 0:
			log.Info("asyncevent-worker: brought closed events' locks down", "jobs", ex.Jobs, "finished", ex.Finished, "locks", ex.Shortened)
		}
	})
}

// periodically calls f every interval (each wait jittered by up to a
// fifth) until ctx is cancelled; the first call comes at a random point of
// the first interval, so that workers started together do not call
// together and a worker restarted often still calls. An interval of 0 or
// less does nothing.
func periodically(ctx context.Context, every time.Duration, f func()) {
	if every <= 0 {
		return
	}
	t := time.NewTimer(rand.N(every))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		f()
		t.Reset(jitter(every))
	}
}

// jitter returns d shortened by a random amount up to a fifth of d.
func jitter(d time.Duration) time.Duration {
	return d - rand.N(d/5+1)
}
