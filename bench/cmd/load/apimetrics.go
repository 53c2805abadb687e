package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// participateRoute is the ingest route's label in the API's
// pacer_http_request_duration_seconds (docs/metrics.md).
const participateRoute = `route="POST /events/{eventId}/participations"`

// pollRoutes are the status poll's labels: the owner's, which the load
// tool's clients poll (as the dev admin, who may read any request), and
// the admin's.
var pollRoutes = [...]string{`route="GET /requests/{requestId}"`, `route="GET /admin/requests/{requestId}"`}

func isPoll(name string) bool {
	return strings.HasPrefix(name, "pacer_http_request_duration_seconds_count{") &&
		(strings.Contains(name, pollRoutes[0]) || strings.Contains(name, pollRoutes[1]))
}

// apiIngest is the API's own account of its ingests, from its /metrics
// (docs/metrics.md), as running totals: the participations it answered
// (every status: an answer that failed made calls too) and their handler
// time, and its TransactWriteItems and SendMessage
// calls and their time (pacer_aws_call_duration_seconds, retries
// included). During a run the API makes no other transactions or sends, so
// the difference of two readings splits an ingest's time into the
// stand-ins' calls and Pacer's own code (ingestSplit).
type apiIngest struct {
	Requests, HandlerS float64
	TxN, TxS           float64
	SendN, SendS       float64
	// Capacity is the DynamoDB capacity the API was told its calls
	// consumed: it moves only when it asks (PACER_CONSUMED_CAPACITY).
	Capacity float64
	// Polls counts the status polls answered; Reads the API's GetItem
	// calls (a poll's read, and the event's when its cache refreshes);
	// CPUS is the API process's CPU time (process_cpu_seconds_total).
	Polls, Reads, CPUS float64
	// RSS is the process's resident memory (process_resident_memory_bytes).
	RSS float64
}

// parseAPIIngest reads the API's /metrics text. Series it does not find
// count as 0: an API that answered no participation between two readings
// gives no split (ingestSplit).
func parseAPIIngest(r io.Reader) (apiIngest, error) {
	var m apiIngest
	err := samples(r, func(name string, v float64) {
		switch {
		case strings.HasPrefix(name, "pacer_http_request_duration_seconds_sum{") && strings.Contains(name, participateRoute):
			m.HandlerS += v
		case strings.HasPrefix(name, "pacer_http_request_duration_seconds_count{") && strings.Contains(name, participateRoute):
			m.Requests += v
		case strings.HasPrefix(name, "pacer_aws_call_duration_seconds_sum{") && strings.Contains(name, `operation="TransactWriteItems"`):
			m.TxS += v
		case strings.HasPrefix(name, "pacer_aws_call_duration_seconds_count{") && strings.Contains(name, `operation="TransactWriteItems"`):
			m.TxN += v
		case strings.HasPrefix(name, "pacer_aws_call_duration_seconds_sum{") && strings.Contains(name, `operation="SendMessage"`):
			m.SendS += v
		case strings.HasPrefix(name, "pacer_aws_call_duration_seconds_count{") && strings.Contains(name, `operation="SendMessage"`):
			m.SendN += v
		case strings.HasPrefix(name, "pacer_aws_consumed_capacity_units_total{"):
			m.Capacity += v
		case strings.HasPrefix(name, "pacer_aws_call_duration_seconds_count{") && strings.Contains(name, `operation="GetItem"`):
			m.Reads += v
		case isPoll(name):
			m.Polls += v
		case name == "process_cpu_seconds_total":
			m.CPUS = v
		case name == "process_resident_memory_bytes":
			m.RSS = v
		}
	})
	return m, err
}

// scrapeAPI reads the API's /metrics at base.
func scrapeAPI(ctx context.Context, c *http.Client, base string) (apiIngest, error) {
	resp, err := get(ctx, c, base+"/metrics")
	if err != nil {
		return apiIngest{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiIngest{}, fmt.Errorf("%s/metrics: %s", base, resp.Status)
	}
	return parseAPIIngest(resp.Body)
}

// IngestSplit is where an ingest's time went in the API during a run
// (the difference of two apiIngest readings): per participation answered
// (any status), the handler's mean time, of which the stand-ins' calls (its
// transactions and its send), and the rest, Pacer's own code (routing,
// auth, validation, encoding); and the mean TransactWriteItems and
// SendMessage latency the API saw.
type IngestSplit struct {
	Requests  int     `json:"requests"`
	HandlerMs float64 `json:"handlerMs"`
	CallsMs   float64 `json:"callsMs"`
	OwnMs     float64 `json:"ownMs"`
	TxMeanMs  float64 `json:"txMeanMs"`
	TxPerReq  float64 `json:"txPerRequest"`
	SendMs    float64 `json:"sendMeanMs"`
	// ConsumedCapacity says the API asked DynamoDB for every call's
	// consumed capacity during the run (PACER_CONSUMED_CAPACITY=true),
	// which DynamoDB Local computes inside its table-wide write lock: the
	// raw loops do not ask, so the ratios then include that cost.
	ConsumedCapacity bool `json:"consumedCapacity"`
	// CPUMs is the API process's CPU time per participation answered,
	// with the status polls its clients made (PollsPer each) and anything
	// else the process did meanwhile (under make run, the dev process:
	// the photo API and the event publisher too, idle in a load run).
	CPUMs    float64 `json:"cpuMsPerParticipation"`
	PollsPer float64 `json:"pollsPerParticipation"`
	// ReadsPer is the API's GetItem calls per participation: the polls
	// that read the table (a 304 before a candidate's pollAt does not).
	ReadsPer float64 `json:"readsPerParticipation"`
	// RSSMiB is the API process's resident memory after the run: Go
	// returns freed heap to the OS only slowly, so about its peak.
	RSSMiB float64 `json:"rssMiB,omitempty"`
}

// ingestSplit is the split of the run between readings a and b; nil if the
// API answered no participation between them.
func ingestSplit(a, b apiIngest) *IngestSplit {
	n := b.Requests - a.Requests
	if n <= 0 {
		return nil
	}
	tx, txS := b.TxN-a.TxN, b.TxS-a.TxS
	send, sendS := b.SendN-a.SendN, b.SendS-a.SendS
	s := &IngestSplit{Requests: int(n), HandlerMs: 1000 * (b.HandlerS - a.HandlerS) / n, CallsMs: 1000 * (txS + sendS) / n, TxPerReq: tx / n,
		ConsumedCapacity: b.Capacity > a.Capacity}
	s.OwnMs = s.HandlerMs - s.CallsMs
	s.CPUMs, s.PollsPer, s.ReadsPer = 1000*(b.CPUS-a.CPUS)/n, (b.Polls-a.Polls)/n, (b.Reads-a.Reads)/n
	s.RSSMiB = b.RSS / (1 << 20)
	if tx > 0 {
		s.TxMeanMs = 1000 * txS / tx
	}
	if send > 0 {
		s.SendMs = 1000 * sendS / send
	}
	return s
}
