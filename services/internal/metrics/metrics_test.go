package metrics_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

// Every collector of the kit, observed once, lints clean and matches the
// contract (docs/metrics.md) in name, type and label names; labelled
// counters start at 0.
func TestCollectorsMatchTheContract(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	h := metrics.NewHTTP(reg, "asyncevent-api")
	a := metrics.NewAWS(reg, "T")
	w := metrics.NewWorker(reg, 7)
	d := metrics.NewDelays(reg)
	p := metrics.NewParticipations(reg, []string{"event-closed"})
	ph := metrics.NewPhoto(reg)
	metrics.NewPool(reg).Desired(3)
	metrics.NewQueue(reg, func(context.Context) (sqsqueue.Counts, sqsqueue.Counts, error) {
		return sqsqueue.Counts{Visible: 1, InFlight: 2, Delayed: 3}, sqsqueue.Counts{Visible: 4}, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))

	if n := len(metricstest.Contracts(t)); n != 19 {
		t.Fatalf("read %d metrics from docs/metrics.md, want its 19", n)
	}
	metrics.NewInvariant(reg, func(context.Context, int) (int, []string, error) { return 1, nil, nil }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	before := metricstest.Gather(t, reg)
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"pacer_worker_messages_total", []string{"outcome", "final"}},
		{"pacer_participations_total", []string{"outcome", "refused", "reason", "event-closed"}},
		{"pacer_participations_total", []string{"outcome", "new"}},
		{"pacer_aws_calls_total", []string{"service_name", "sqs", "operation", "ReceiveMessage", "outcome", "throttled"}},
		{"pacer_aws_consumed_capacity_units_total", []string{"table", "T", "operation", "TransactWriteItems"}},
		{"pacer_photo_ingest_photos_total", []string{"outcome", "refused"}},
		{"pacer_worker_in_flight", nil},
		{"pacer_worker_dead_lettered_total", []string{"class", "ALLOCATING"}},
		{"pacer_worker_decided_total", []string{"event_type", "FIRST_COME"}},
	} {
		if v := before.Value(c.name, c.labels...); v != 0 {
			t.Errorf("%s%v starts at %v, want 0", c.name, c.labels, v)
		}
	}
	if v := before.Value("pacer_worker_concurrency"); v != 7 {
		t.Errorf("concurrency %v", v)
	}

	srv := httptest.NewServer(h.Wrap(http.NewServeMux()))
	defer srv.Close()
	if resp, err := http.Get(srv.URL + "/nowhere"); err == nil {
		resp.Body.Close()
	}
	a.ObserveCall(context.Background(), ddb.Call{Operation: "PutItem", Table: "T", Capacity: 1})
	w.Start()(metrics.Succeeded)
	w.DeadLettered("THROTTLED")
	w.Decided("LOTTERY")
	d.Queue("FIRST_COME", 1000, 1500)
	d.E2E("FIRST_COME", 1000, 2500)
	p.Accepted(false)
	ph.Searched("bib", time.Millisecond)
	ph.Ingested(3, 2)

	fams := metricstest.Gather(t, reg)
	metricstest.Check(t, fams, "pacer_http_request_duration_seconds", "pacer_queue_messages", "pacer_worker_messages_total",
		"pacer_participations_total", "pacer_worker_in_flight", "pacer_worker_concurrency", "pacer_worker_handler_duration_seconds",
		"pacer_queue_delay_seconds", "pacer_e2e_delay_seconds", "pacer_aws_calls_total",
		"pacer_aws_consumed_capacity_units_total", "pacer_photo_ingest_photos_total", "pacer_photo_search_duration_seconds",
		"pacer_event_capacity_invariant_ok", "pacer_worker_dead_lettered_total", "pacer_worker_decided_total", "pacer_workers_desired", "pacer_workers_running")
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pacer_http_request_duration_seconds", []string{"route", metrics.Unmatched, "code_class", "4xx"}, 1},
		{"pacer_queue_messages", []string{"queue", "main", "state", "delayed"}, 3},
		{"pacer_queue_messages", []string{"queue", "dlq", "state", "visible"}, 4},
		{"pacer_aws_consumed_capacity_units_total", []string{"table", "T", "operation", "PutItem"}, 1},
		{"pacer_worker_messages_total", []string{"outcome", "succeeded"}, 1},
		{"pacer_worker_dead_lettered_total", []string{"class", "THROTTLED"}, 1},
		{"pacer_worker_decided_total", []string{"event_type", "LOTTERY"}, 1},
		{"pacer_photo_ingest_photos_total", []string{"outcome", "refused"}, 1},
		{"pacer_photo_ingest_photos_total", []string{"outcome", "ingested"}, 2},
		{"pacer_event_capacity_invariant_ok", nil, 1},
	} {
		if v := fams.Value(c.name, c.labels...); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
}

// The queue gauge reads SQS at most once per QueueCacheTTL, and a failed
// read drops the series from that scrape rather than failing it.
func TestQueueGaugeIsCached(t *testing.T) {
	t.Parallel()
	var reads atomic.Int32
	fail := atomic.Bool{}
	reg := prometheus.NewRegistry()
	metrics.NewQueue(reg, func(context.Context) (sqsqueue.Counts, sqsqueue.Counts, error) {
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

// AWS calls are counted by outcome: a throttling error is "throttled",
// another error "error".
func TestAWSOutcome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{&smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, "throttled"},
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, "throttled"},
		{&smithy.GenericAPIError{Code: "RequestThrottled"}, "throttled"},
		{&smithy.GenericAPIError{Code: "ConditionalCheckFailedException"}, "error"},
		{errors.New("dial tcp: refused"), "error"},
	} {
		if got := metrics.CallOutcome(c.err); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}

// The invariant gauge is 0 when an event breaks it, checks at most once
// per InvariantCacheTTL with at most InvariantMaxEvents events, and drops
// the series when the check fails.
func TestInvariantGauge(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	reg := prometheus.NewRegistry()
	metrics.NewInvariant(reg, func(_ context.Context, max int) (int, []string, error) {
		calls.Add(1)
		if max != metrics.InvariantMaxEvents {
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
	metrics.NewInvariant(failing, func(context.Context, int) (int, []string, error) { return 0, nil, errors.New("down") },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if n := testutil.CollectAndCount(failing); n != 0 {
		t.Fatalf("%d series from a failed check", n)
	}
}
