// Package metrics is Pacer's generic Prometheus kit: one registry per
// binary (not the global default, so tests running in parallel do not
// collide), the collectors every service shares (HTTP timing and error
// answers by problem type, AWS calls and consumed capacity, the token key
// set), the latency buckets, the /metrics handler, and EMFWriter, which
// writes chosen metrics as CloudWatch Embedded Metric Format log lines
// (EMF ships the ones the alarms read where nothing scrapes: ECS).
//
// Each service keeps its own domain's collectors beside it (AsyncEvent's
// worker, queue and invariant gauges in asynceventbackend, the API's
// participations, the publisher's delays, photo-api's photo metrics, the
// dev worker pool's gauges); the contract they all follow is
// docs/metrics.md. Labelled counters and gauges are initialised at
// construction for every value the binary can produce, so a rate is 0, not
// absent, before the first event. The kit imports no module and no HTTP
// framework: every binary links it.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where every binary serves its metrics.
const Path = "/metrics"

// NewRegistry returns a registry with the Go runtime and process
// collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Handler serves reg in the Prometheus text (or negotiated) format. A
// collector that fails does not fail the scrape: the others are served.
func Handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Registry: reg})
}

// Latency buckets (seconds), shared by every service's histograms: calls
// (HTTP, AWS, a handler) 1 ms … 8 s; queue and end-to-end delays 10 ms …
// 11 min, so the p95 stays readable across a spike absorbed as minutes of
// delay.
var (
	CallBuckets  = prometheus.ExponentialBuckets(0.001, 2, 14)
	DelayBuckets = prometheus.ExponentialBuckets(0.01, 2, 17)
)
