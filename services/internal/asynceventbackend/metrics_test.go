package asynceventbackend

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

// The queue gauge reads SQS at most once per QueueCacheTTL, and a failed
// read drops the series from that scrape rather than failing it.
func TestQueueGaugeIsCached(t *testing.T) {
	t.Parallel()
	var reads atomic.Int32
	fail := atomic.Bool{}
	reg := prometheus.NewRegistry()
	NewQueueGauge(reg, func(context.Context) (sqsqueue.Counts, sqsqueue.Counts, error) {
		reads.Add(1)
		if fail.Load() {
			return sqsqueue.Counts{}, sqsqueue.Counts{}, errors.New("down")
		}
		return sqsqueue.Counts{Visible: int(reads.Load())}, sqsqueue.Counts{}, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for range 5 {
		if n := testutil.CollectAndCount(reg, "pacer_queue_messages"); n != 6 {
			t.Fatalf("%d series, want 6", n)
		}
	}
	if reads.Load() != 1 {
		t.Fatalf("5 scrapes read SQS %d times, want 1", reads.Load())
	}
}

// The invariant gauge is 0 when an event breaks it, checks at most once
// per InvariantCacheTTL with at most InvariantMaxEvents events, and drops
// the series when the check fails.
func TestInvariantGauge(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	reg := prometheus.NewRegistry()
	NewInvariant(reg, func(_ context.Context, max int) (int, []string, error) {
		calls.Add(1)
		if max != InvariantMaxEvents {
			t.Errorf("max %d", max)
		}
		return 2, []string{"b"}, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for range 3 {
		if v := metricstest.Gather(t, reg).Value("pacer_event_capacity_invariant_ok"); v != 0 {
			t.Fatalf("broken invariant reads %v", v)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("3 scrapes checked %d times", calls.Load())
	}
	failing := prometheus.NewRegistry()
	NewInvariant(failing, func(context.Context, int) (int, []string, error) { return 0, nil, errors.New("down") },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if n := testutil.CollectAndCount(failing); n != 0 {
		t.Fatalf("%d series from a failed check", n)
	}
}
