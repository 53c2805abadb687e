package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/dev/workerpool"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/photoapi"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Every collector of every service (the metrics kit's, asynceventbackend's,
// the API's, the publisher's delays and lag, photo-api's and the worker
// pool's) in one
// registry, observed once, lints clean and matches the
// contract (docs/metrics.md) in name, type and label names; labelled
// counters start at 0.
func TestEveryCollectorMatchesTheContract(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	h := metrics.NewHTTP(reg, "asyncevent-api", metrics.Problem{Status: 401, Type: metrics.NoProblemType})
	a := metrics.NewAWS(reg, "T")
	w := asynceventbackend.NewWorkerMetrics(reg, 7)
	d := asynceventevents.NewDelays(reg)
	asynceventevents.NewLag(reg)
	p := asynceventapi.NewParticipations(reg, []string{"event-closed"})
	rl := asynceventapi.NewRateLimited(reg)
	hc := asynceventapi.NewHumanChecks(reg)
	ph := photoapi.NewPhotoMetrics(reg)
	workerpool.NewMetrics(reg).Desired(3)
	var unsure, late int64
	asynceventbackend.NewUnsureWrites(reg, func() int64 { return unsure })
	asynceventbackend.NewLateArrivals(reg, func() int64 { return late })
	asynceventbackend.NewQueueGauge(reg, func(context.Context) (sqsqueue.Counts, sqsqueue.Counts, error) {
		return sqsqueue.Counts{Visible: 1, InFlight: 2, Delayed: 3}, sqsqueue.Counts{Visible: 4}, nil
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))

	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: []byte("contract-test-secret-at-least-32-bytes")})
	if err != nil {
		t.Fatal(err)
	}
	metrics.NewKeySet(reg, server.KeySetState(v))

	if n := len(metricstest.Contracts(t)); n != 27 {
		t.Fatalf("read %d metrics from docs/metrics.md, want its 27", n)
	}
	asynceventbackend.NewInvariant(reg, func(context.Context, int) (int, []string, error) { return 1, nil, nil }, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
		{"pacer_rate_limited_total", []string{"class", "poll", "by", "address"}},
		{"pacer_human_checks_total", []string{"outcome", "unavailable_admitted"}},
		{"pacer_queued_at_unsure_total", nil},
		{"pacer_late_arrivals_total", nil},
		{"pacer_http_problems_total", []string{"class", "unauthenticated", "status", "401", "type", "about:blank"}},
		{"pacer_auth_key_set_refresh_failed", nil},
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
	w.Start()(asynceventbackend.Succeeded)
	w.DeadLettered("THROTTLED")
	w.Decided("LOTTERY")
	d.Queue("FIRST_COME", 1000, 1500)
	d.E2E("FIRST_COME", 1000, 2500)
	p.Accepted(false)
	rl.Refused("participate", "user")
	hc.HumanChecked(asyncevent.HumanOutcomeFailed)
	ph.Searched("bib", time.Millisecond)
	ph.Ingested(3, 2)
	unsure, late = 2, 1

	fams := metricstest.Gather(t, reg)
	metricstest.Check(t, fams, "pacer_http_request_duration_seconds", "pacer_queue_messages", "pacer_worker_messages_total",
		"pacer_participations_total", "pacer_worker_in_flight", "pacer_worker_concurrency", "pacer_worker_handler_duration_seconds",
		"pacer_queue_delay_seconds", "pacer_e2e_delay_seconds", "pacer_aws_calls_total",
		"pacer_aws_consumed_capacity_units_total", "pacer_photo_ingest_photos_total", "pacer_photo_search_duration_seconds",
		"pacer_event_capacity_invariant_ok", "pacer_worker_dead_lettered_total", "pacer_worker_decided_total", "pacer_workers_desired", "pacer_workers_running",
		"pacer_events_publisher_lag_seconds", "pacer_rate_limited_total", "pacer_human_checks_total",
		"pacer_queued_at_unsure_total", "pacer_late_arrivals_total", "pacer_http_problems_total", "pacer_auth_keys", "pacer_auth_key_set_refresh_failed")
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pacer_http_request_duration_seconds", []string{"route", metrics.Unmatched, "code_class", "4xx"}, 1},
		{"pacer_http_problems_total", []string{"class", "client", "status", "404", "type", "about:blank"}, 1},
		{"pacer_auth_keys", nil, 1},
		{"pacer_queue_messages", []string{"queue", "main", "state", "delayed"}, 3},
		{"pacer_queue_messages", []string{"queue", "dlq", "state", "visible"}, 4},
		{"pacer_aws_consumed_capacity_units_total", []string{"table", "T", "operation", "PutItem"}, 1},
		{"pacer_worker_messages_total", []string{"outcome", "succeeded"}, 1},
		{"pacer_worker_dead_lettered_total", []string{"class", "THROTTLED"}, 1},
		{"pacer_rate_limited_total", []string{"class", "participate", "by", "user"}, 1},
		{"pacer_human_checks_total", []string{"outcome", "failed"}, 1},
		{"pacer_worker_decided_total", []string{"event_type", "LOTTERY"}, 1},
		{"pacer_photo_ingest_photos_total", []string{"outcome", "refused"}, 1},
		{"pacer_photo_ingest_photos_total", []string{"outcome", "ingested"}, 2},
		{"pacer_event_capacity_invariant_ok", nil, 1},
		{"pacer_queued_at_unsure_total", nil, 2},
		{"pacer_late_arrivals_total", nil, 1},
	} {
		if v := fams.Value(c.name, c.labels...); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
}
