package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/eventsink"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
)

// The AsyncEvent API and a worker, against the local stand-ins, move their
// metrics by exactly what happened: 5 new participations, 1 duplicate and
// 1 refused (unknown event) at the API; with capacity 3, 3 succeeded and 2
// rejected at the worker, each decided once with a handler duration; at
// the analytics publisher, 5 QueueDelays and 5 E2EDelays whose sums are
// the request views' queueDelayMs and e2eDelayMs (the stored times: one
// definition, docs/metrics.md). The registries lint clean and match the
// contract.
// Consumed capacity is counted with the setting on, and not asked for with
// it off.
func TestMetricsThroughAPIAndWorker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	awsCfg := ownStandins(ctx, t)
	name := fmt.Sprintf("metrics-%d", time.Now().UnixNano())
	backend := asynceventbackend.Config{Table: name, Queue: name, Setup: true, AWS: &awsCfg, ConsumedCapacity: true}

	apiURL := serve(t, ctx, "api", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventapi.Run(ctx, asynceventapi.Config{Config: backend, Listener: l, Dev: true, Ready: func(context.Context, string, asynceventapi.Deps) error { ready(); return nil }})
	})
	admin := map[string]string{server.DevUserHeader: "ops", server.DevRolesHeader: "admin"}
	send(t, "POST", apiURL+"/admin/events", `{"eventId":"m","eventType":"FIRST_COME","capacityTotal":3}`, admin, http.StatusCreated)
	for i := 1; i <= 5; i++ {
		send(t, "POST", apiURL+"/events/m/participations", "", map[string]string{server.DevUserHeader: fmt.Sprintf("u%d", i)}, http.StatusAccepted)
	}
	send(t, "POST", apiURL+"/events/m/participations", "", map[string]string{server.DevUserHeader: "u1"}, http.StatusAccepted)
	send(t, "POST", apiURL+"/events/nope/participations", "", map[string]string{server.DevUserHeader: "u1"}, http.StatusNotFound)

	api := metricstest.Scrape(t, apiURL+"/metrics")
	metricstest.Check(t, api, "pacer_http_request_duration_seconds", "pacer_participations_total", "pacer_queue_messages", "pacer_event_capacity_invariant_ok",
		"pacer_aws_calls_total", "pacer_aws_call_duration_seconds", "pacer_aws_consumed_capacity_units_total", "go_goroutines")
	participate := "POST /events/{eventId}/participations"
	expect(t, api, []want{
		{"pacer_participations_total", []string{"outcome", "new", "reason", "none"}, 5},
		{"pacer_participations_total", []string{"outcome", "duplicate", "reason", "none"}, 1},
		{"pacer_participations_total", []string{"outcome", "refused", "reason", "event-not-found"}, 1},
		{"pacer_participations_total", []string{"outcome", "refused", "reason", "event-closed"}, 0},
		{"pacer_http_request_duration_seconds", []string{"service", "asyncevent-api", "route", participate, "code_class", "2xx"}, 6},
		{"pacer_http_request_duration_seconds", []string{"service", "asyncevent-api", "route", participate, "code_class", "4xx"}, 1},
		{"pacer_http_request_duration_seconds", []string{"route", "POST /admin/events", "code_class", "2xx"}, 1},
		{"pacer_aws_calls_total", []string{"service_name", "sqs", "operation", "SendMessage", "outcome", "ok"}, 5},
		{"pacer_aws_call_duration_seconds", []string{"service_name", "sqs", "operation", "SendMessage"}, 5},
		// local-aws-sqs counts a just-sent message as delayed for a moment.
		{"pacer_queue_messages", []string{"queue", "main", "state", "in_flight"}, 0},
		{"pacer_queue_messages", []string{"queue", "dlq"}, 0},
		{"pacer_event_capacity_invariant_ok", nil, 1},
	})
	if v := api.Value("pacer_queue_messages", "queue", "main", "state", "visible") + api.Value("pacer_queue_messages", "queue", "main", "state", "delayed"); v != 5 {
		t.Errorf("main queue visible + delayed = %v, want 5", v)
	}
	if v := api.Value("pacer_aws_consumed_capacity_units_total", "table", name); v <= 0 {
		t.Errorf("consumed capacity on %s: %v", name, v)
	}

	opsURL := serve(t, ctx, "worker", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventworker.Run(ctx, asynceventworker.Config{Config: backend, Concurrency: 3, Batch: 10, Wait: time.Second,
			Visibility: 5 * time.Minute, OpsListener: l, Ready: ready})
	})
	var worker metricstest.Families
	// Decided, and done with: a handler counts its message's outcome before
	// it observes its duration and leaves the in-flight gauge, so a scrape
	// between the two (seen on a loaded machine) is not the end yet.
	asynceventtest.Eventually(t, time.Minute, "the worker to decide 5 messages and finish its handlers", func() (bool, error) {
		worker = metricstest.Scrape(t, opsURL+"/metrics")
		decided := worker.Value("pacer_worker_messages_total", "outcome", "succeeded")+worker.Value("pacer_worker_messages_total", "outcome", "rejected") >= 5
		return decided && worker.Value("pacer_worker_in_flight") == 0 && worker.Value("pacer_worker_handler_duration_seconds") >= 10, nil
	})
	metricstest.Check(t, worker, "pacer_worker_messages_total", "pacer_worker_in_flight", "pacer_worker_concurrency",
		"pacer_worker_handler_duration_seconds", "pacer_worker_decided_total",
		"pacer_aws_calls_total", "pacer_aws_call_duration_seconds", "pacer_aws_consumed_capacity_units_total")
	// The event orders by arrival (the default): each request's message is
	// delivered twice. The first delivery makes the request a candidate,
	// sends the message again, delayed to when the allocator will have
	// decided, and acks this one (waiting); the allocator decides (decided
	// counted); the copy's delivery finds the request decided and acks
	// (succeeded or rejected).
	expect(t, worker, []want{
		{"pacer_worker_messages_total", []string{"outcome", "succeeded"}, 3},
		{"pacer_worker_messages_total", []string{"outcome", "rejected"}, 2},
		{"pacer_worker_messages_total", []string{"outcome", "waiting"}, 5},
		{"pacer_worker_messages_total", []string{"outcome", "retryable"}, 0},
		{"pacer_worker_messages_total", []string{"outcome", "final"}, 0},
		{"pacer_worker_handler_duration_seconds", nil, 10},
		{"pacer_worker_decided_total", []string{"event_type", "FIRST_COME"}, 5},
		{"pacer_worker_decided_total", []string{"event_type", "LOTTERY"}, 0},
		{"pacer_worker_in_flight", nil, 0},
		{"pacer_worker_concurrency", nil, 3},
	})
	if v := worker.Value("pacer_aws_calls_total", "service_name", "sqs", "operation", "ReceiveMessage", "outcome", "ok"); v < 1 {
		t.Errorf("worker ReceiveMessage calls: %v", v)
	}

	// The publisher observes the two delays (QueueDelay, E2EDelay;
	// docs/metrics.md) from the stored times: the
	// same sums as the request views'.
	eventsURL := serve(t, ctx, "events", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventevents.Run(ctx, asynceventevents.Config{Config: backend, CheckpointTable: name + "-cp", Consumer: "metrics-test",
			Sink: discard{}, Poll: 50 * time.Millisecond, OpsListener: l, Ready: ready})
	})
	var page struct{ Items []asynceventapi.RequestView }
	get(t, apiURL+"/admin/events/m/requests?limit=10", admin, &page)
	var queueSum, e2eSum float64
	for _, r := range page.Items {
		queueSum += float64(r.QueueDelayMs) / 1000
		e2eSum += float64(r.E2EDelayMs) / 1000
	}
	var events metricstest.Families
	asynceventtest.Eventually(t, time.Minute, "the publisher to observe 5 delays of each kind", func() (bool, error) {
		events = metricstest.Scrape(t, eventsURL+"/metrics")
		q, e := events.Value("pacer_queue_delay_seconds", "event_type", "FIRST_COME"), events.Value("pacer_e2e_delay_seconds", "event_type", "FIRST_COME")
		return q == 5 && e == 5, fmt.Errorf("queue delays %v, e2e delays %v", q, e)
	})
	metricstest.Check(t, events, "pacer_queue_delay_seconds", "pacer_e2e_delay_seconds")
	if len(page.Items) != 5 || math.Abs(events.Sum("pacer_queue_delay_seconds")-queueSum) > 1e-9 || math.Abs(events.Sum("pacer_e2e_delay_seconds")-e2eSum) > 1e-9 {
		t.Errorf("delay sums: queue %v e2e %v seconds at the publisher; the %d request views say %v and %v",
			events.Sum("pacer_queue_delay_seconds"), events.Sum("pacer_e2e_delay_seconds"), len(page.Items), queueSum, e2eSum)
	}

	// With the setting off (what auto gives against the stand-ins), the
	// same calls do not ask for their consumed capacity: DynamoDB Local
	// returns none, and the counter stays at 0.
	quiet := backend
	quiet.ConsumedCapacity = false
	quietURL := serve(t, ctx, "api without consumed capacity", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventapi.Run(ctx, asynceventapi.Config{Config: quiet, Listener: l, Dev: true, Ready: func(context.Context, string, asynceventapi.Deps) error { ready(); return nil }})
	})
	send(t, "POST", quietURL+"/events/m/participations", "", map[string]string{server.DevUserHeader: "u6"}, http.StatusAccepted)
	q := metricstest.Scrape(t, quietURL+"/metrics")
	if n := q.Value("pacer_aws_calls_total", "service_name", "dynamodb", "operation", "TransactWriteItems", "outcome", "ok"); n != 2 {
		t.Errorf("TransactWriteItems of one participation without consumed capacity: %v, want 2", n)
	}
	if v := q.Value("pacer_aws_consumed_capacity_units_total", "table", name); v != 0 {
		t.Errorf("consumed capacity on %s with the setting off: %v, want 0", name, v)
	}
}

type want struct {
	name   string
	labels []string
	value  float64
}

func expect(t *testing.T, fams metricstest.Families, wants []want) {
	t.Helper()
	for _, w := range wants {
		if got := fams.Value(w.name, w.labels...); got != w.value {
			t.Errorf("%s%v = %v, want %v", w.name, w.labels, got, w.value)
		}
	}
}

// serve runs run on a free loopback port until the test ends and returns
// its base URL once it is ready.
func serve(t *testing.T, ctx context.Context, what string, run func(ctx context.Context, l net.Listener, ready func()) error) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	ready := make(chan struct{})
	finished := make(chan struct{})
	var runErr error
	go func() { runErr = run(ctx, l, func() { close(ready) }); close(finished) }()
	t.Cleanup(func() {
		cancel()
		<-finished
		if runErr != nil {
			t.Errorf("%s: %v", what, runErr)
		}
	})
	select {
	case <-ready:
	case <-finished:
		t.Fatalf("%s stopped: %v", what, runErr)
	case <-time.After(time.Minute):
		t.Fatalf("%s not ready after a minute", what)
	}
	return "http://" + l.Addr().String()
}

// send makes a request and checks its status.
func send(t *testing.T, method, url, body string, headers map[string]string, status int) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d, want %d", method, url, resp.StatusCode, status)
	}
}

// discard is a sink that drops what it is given.
type discard struct{}

func (discard) Put(context.Context, []eventsink.Envelope) error { return nil }

// get makes a GET with headers, checks for 200 and decodes the JSON body
// into v.
func get(t *testing.T, url string, headers map[string]string, v any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range headers {
		req.Header.Set(k, h)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// ownStandins starts DynamoDB Local and the SQS stand-in for t alone
// (stopped when t ends), points the AWS environment at them, and returns
// the AWS config loaded from it.
func ownStandins(ctx context.Context, t *testing.T) aws.Config {
	t.Helper()
	stack, err := standin.Start(ctx, standin.Config{DynamoDB: true, SQS: true})
	if err != nil {
		t.Fatalf("stand-ins (run `make deps` first): %v", err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	for k, v := range stack.Env() {
		t.Setenv(k, v)
	}
	awsCfg, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return awsCfg
}
