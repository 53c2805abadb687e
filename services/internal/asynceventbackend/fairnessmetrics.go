package asynceventbackend

import "github.com/prometheus/client_golang/prometheus"

// NewUnsureWrites registers pacer_queued_at_unsure_total, read from
// unsure (asyncevent.Ingest.QueuedAtUnsure in the API,
// asyncevent.Worker.QueuedAtUnsure in a worker): the RECEIVED → QUEUED
// writes whose outcome the process does not know (failed at WriteTimeout
// or otherwise than by their condition). Each may land late and become
// one late arrival; every late arrival comes from one (docs/fairness.md).
func NewUnsureWrites(reg prometheus.Registerer, unsure func() int64) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "pacer_queued_at_unsure_total",
		Help: "queuedAt writes (RECEIVED to QUEUED) whose outcome this process does not know; each may become one late arrival.",
	}, func() float64 { return float64(unsure()) }))
}

// NewLateArrivals registers pacer_late_arrivals_total, read from late
// (asyncevent.Allocator.LateArrivals): the requests this worker's arrival
// allocator found queued behind its position, decided as they came
// rather than in (queuedAt, requestId) order (docs/fairness.md).
func NewLateArrivals(reg prometheus.Registerer, late func() int64) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "pacer_late_arrivals_total",
		Help: "Requests this worker's arrival allocator found behind its position (decided out of arrival order).",
	}, func() float64 { return float64(late()) }))
}
