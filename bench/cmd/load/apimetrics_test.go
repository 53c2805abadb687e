package main

import (
	"math"
	"strings"
	"testing"
)

// The split reads the ingest route's histogram (every status: the 4xx
// series is read too, unchanged between the readings here) and the API's
// transaction and send calls, and nothing else (other routes, other
// operations), and divides the run's differences by its ingests. It
// says the API asked for consumed capacity only when that counter moved.
func TestIngestSplit(t *testing.T) {
	metrics := func(req, handler, txN, txS, sendN, sendS, capacity string) string {
		return `# HELP pacer_http_request_duration_seconds HTTP request latency.
pacer_http_request_duration_seconds_sum{code_class="2xx",route="POST /events/{eventId}/participations",service="asyncevent-api"} ` + handler + `
pacer_http_request_duration_seconds_count{code_class="2xx",route="POST /events/{eventId}/participations",service="asyncevent-api"} ` + req + `
pacer_http_request_duration_seconds_sum{code_class="4xx",route="POST /events/{eventId}/participations",service="asyncevent-api"} 99
pacer_http_request_duration_seconds_count{code_class="4xx",route="POST /events/{eventId}/participations",service="asyncevent-api"} 99
pacer_http_request_duration_seconds_sum{code_class="2xx",route="GET /admin/requests/{requestId}",service="asyncevent-api"} 500
pacer_http_request_duration_seconds_count{code_class="2xx",route="GET /admin/requests/{requestId}",service="asyncevent-api"} ` + req + `00
pacer_aws_call_duration_seconds_sum{operation="TransactWriteItems",service_name="dynamodb"} ` + txS + `
pacer_aws_call_duration_seconds_count{operation="TransactWriteItems",service_name="dynamodb"} ` + txN + `
pacer_aws_call_duration_seconds_sum{operation="GetItem",service_name="dynamodb"} 70
pacer_aws_call_duration_seconds_count{operation="GetItem",service_name="dynamodb"} ` + req + `0
pacer_aws_call_duration_seconds_sum{operation="SendMessage",service_name="sqs"} ` + sendS + `
pacer_aws_call_duration_seconds_count{operation="SendMessage",service_name="sqs"} ` + sendN + `
pacer_aws_consumed_capacity_units_total{operation="TransactWriteItems",table="AsyncEventTable"} ` + capacity + `
pacer_http_request_duration_seconds_count{code_class="2xx",route="GET /requests/{requestId}",service="asyncevent-api"} ` + req + `0
pacer_http_request_duration_seconds_count{code_class="2xx",route="GET /me/participations",service="asyncevent-api"} 777
process_cpu_seconds_total ` + handler + `
process_resident_memory_bytes ` + req + `000000
`
	}
	a, err := parseAPIIngest(strings.NewReader(metrics("10", "20", "20", "18", "10", "0.02", "0")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseAPIIngest(strings.NewReader(metrics("110", "270", "220", "258", "110", "0.22", "0")))
	if err != nil {
		t.Fatal(err)
	}
	s := ingestSplit(a, b)
	// 100 ingests: 250 s of handler time, 240 s of transactions (200
	// calls) and 0.2 s of sends.
	// The polls (the owner's and the admin's route) went from 100 + 1000
	// to 1100 + 11000 and the process's CPU time from 20 to 270 s: 110
	// polls and 2.5 s of CPU per participation; the reads from 100 to
	// 1100: 10 per participation.
	// The resident memory is the second reading's: 110 MB.
	want := IngestSplit{Requests: 100, HandlerMs: 2500, CallsMs: 2402, OwnMs: 98, TxMeanMs: 1200, TxPerReq: 2, SendMs: 2, CPUMs: 2500, PollsPer: 110, ReadsPer: 10,
		RSSMiB: 110e6 / (1 << 20)}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-6 }
	if s == nil || s.Requests != want.Requests || !near(s.HandlerMs, want.HandlerMs) || !near(s.CallsMs, want.CallsMs) || !near(s.OwnMs, want.OwnMs) ||
		!near(s.TxMeanMs, want.TxMeanMs) || !near(s.TxPerReq, want.TxPerReq) || !near(s.SendMs, want.SendMs) || !near(s.CPUMs, want.CPUMs) || !near(s.PollsPer, want.PollsPer) || !near(s.ReadsPer, want.ReadsPer) || !near(s.RSSMiB, want.RSSMiB) {
		t.Errorf("split %+v, want %+v", s, want)
	}
	if ingestSplit(b, b) != nil {
		t.Error("a run without ingests has a split")
	}
	r := &Report{API: s}
	if got := r.Summary(); !strings.Contains(got, "Pacer's own code 98.0 ms") {
		t.Errorf("summary does not report the split:\n%s", got)
	}
	if strings.Contains(r.Summary(), "consumed capacity") {
		t.Errorf("a run whose API did not ask for consumed capacity says it did:\n%s", r.Summary())
	}
	// The same run with the API asking (its counter moved).
	c, err := parseAPIIngest(strings.NewReader(metrics("110", "270", "220", "258", "110", "0.22", "612")))
	if err != nil {
		t.Fatal(err)
	}
	if s := ingestSplit(a, c); s == nil || !s.ConsumedCapacity || !strings.Contains((&Report{API: s}).Summary(), "PACER_CONSUMED_CAPACITY=true") {
		t.Errorf("a run whose API asked for consumed capacity: split %+v, summary:\n%s", s, (&Report{API: s}).Summary())
	}
}
