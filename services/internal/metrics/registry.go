// Package metrics is Pacer's Prometheus instrumentation, shared by the APIs
// and the worker: one registry per binary (not the global default, so tests
// running in parallel do not collide), the collectors of the metric contract
// (docs/metrics.md), and the /metrics handler.
//
// Each binary builds a Registry with NewRegistry and the collectors it
// emits (NewHTTP, NewAWS, NewWorker, NewQueue, ...), then serves Handler.
// Labelled counters and gauges are initialised at construction for every
// value the binary can produce, so a rate is 0, not absent, before the first
// event. It imports no HTTP framework: the worker links it too.
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

// Latency buckets (seconds): HTTP and AWS calls 1 ms … 8 s; queue and
// end-to-end delay 10 ms … 11 min, so the p95 stays readable across a
// spike absorbed as minutes of delay.
var (
	callBuckets  = prometheus.ExponentialBuckets(0.001, 2, 14)
	delayBuckets = prometheus.ExponentialBuckets(0.01, 2, 17)
)
