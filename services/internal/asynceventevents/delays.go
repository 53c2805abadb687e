package asynceventevents

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// Delays is the two delays of docs/metrics.md as histograms by event type:
// QueueDelay = startedAt − queuedAt and E2EDelay = finishedAt − queuedAt
// (epoch millis). The analytics publisher observes them from the request
// changes as stored (services/internal/asynceventevents), so that they measure
// between the same instants as the API's request view and the analytics
// SQL (docs/metrics.md).
type Delays struct {
	queue *prometheus.HistogramVec
	e2e   *prometheus.HistogramVec
}

// NewDelays registers the delay histograms on reg.
func NewDelays(reg prometheus.Registerer) *Delays {
	d := &Delays{
		queue: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pacer_queue_delay_seconds",
			Help:    "QueueDelay = startedAt − queuedAt as stored, observed when processing starts, by event type.",
			Buckets: metrics.DelayBuckets,
		}, []string{"event_type"}),
		e2e: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pacer_e2e_delay_seconds",
			Help:    "E2EDelay = finishedAt − queuedAt as stored, observed when the request reaches a terminal state, by event type.",
			Buckets: metrics.DelayBuckets,
		}, []string{"event_type"}),
	}
	reg.MustRegister(d.queue, d.e2e)
	return d
}

// Queue observes a request's startedAt − queuedAt (epoch millis).
func (d *Delays) Queue(eventType string, queuedAt, startedAt int64) {
	d.queue.WithLabelValues(eventType).Observe(millis(startedAt - queuedAt))
}

// E2E observes a request's finishedAt − queuedAt (epoch millis).
func (d *Delays) E2E(eventType string, queuedAt, finishedAt int64) {
	d.e2e.WithLabelValues(eventType).Observe(millis(finishedAt - queuedAt))
}

func millis(ms int64) float64 { return float64(max(ms, 0)) / 1000 }
