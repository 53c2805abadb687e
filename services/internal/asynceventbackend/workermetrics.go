package asynceventbackend

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/asyncevent"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// Worker outcomes (the outcome label of pacer_worker_messages_total).
const (
	Succeeded = "succeeded" // the request ended SUCCEEDED (or was already terminal so)
	Rejected  = "rejected"  // the request ended REJECTED (or was already)
	Retryable = "retryable" // not deleted: SQS redelivers it
	Waiting   = "waiting"   // an arrival candidate waits for the allocator: acked, its message continued
	Final     = "final"     // acked without success: FAILED_FINAL, a malformed message, an unknown request
)

// WorkerMetrics is a worker's metrics: deliveries by outcome, in flight,
// concurrency, handler duration, requests decided and dead letters. (The
// two delays, QueueDelay and E2EDelay, are the analytics publisher's, see
// Delays and docs/metrics.md.)
type WorkerMetrics struct {
	messages *prometheus.CounterVec
	inFlight prometheus.Gauge
	duration *prometheus.HistogramVec
	decided  *prometheus.CounterVec
	dead     *prometheus.CounterVec
}

// NewWorkerMetrics registers a worker's metrics on reg, with pacer_worker_concurrency
// set to concurrency and every outcome counter at 0.
func NewWorkerMetrics(reg prometheus.Registerer, concurrency int) *WorkerMetrics {
	w := &WorkerMetrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_worker_messages_total",
			Help: "Deliveries handled, one per receive, by outcome (succeeded, rejected, retryable, waiting, final).",
		}, []string{"outcome"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pacer_worker_in_flight",
			Help: "Messages being handled now.",
		}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pacer_worker_handler_duration_seconds",
			Help:    "Time in the handler per delivery, by outcome.",
			Buckets: metrics.CallBuckets,
		}, []string{"outcome"}),
		decided: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_worker_decided_total",
			Help: "Requests this process made terminal, by a delivery or by its arrival allocator, by event type.",
		}, []string{"event_type"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_worker_dead_lettered_total",
			Help: "Messages this worker sent to the DLQ on their last receive, by dead-letter class (asyncevent.DeadClass; UNKNOWN ones are moved by SQS and not counted here).",
		}, []string{"class"}),
	}
	concurrent := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "pacer_worker_concurrency",
		Help: "The configured concurrency (PACER_WORKER_CONCURRENCY).",
	})
	concurrent.Set(float64(concurrency))
	reg.MustRegister(w.messages, w.inFlight, w.duration, w.decided, w.dead, concurrent)
	for _, o := range []string{Succeeded, Rejected, Retryable, Waiting, Final} {
		w.messages.WithLabelValues(o)
	}
	for _, t := range []asyncevent.EventType{asyncevent.FirstCome, asyncevent.Lottery} {
		w.decided.WithLabelValues(string(t))
	}
	for _, c := range asyncevent.DeadClasses {
		if c != asyncevent.DeadUnknown {
			w.dead.WithLabelValues(string(c))
		}
	}
	return w
}

// Start notes a delivery entering the handler; call the returned function
// with its outcome when it leaves.
func (w *WorkerMetrics) Start() (done func(outcome string)) {
	w.inFlight.Inc()
	start := time.Now()
	return func(outcome string) {
		w.inFlight.Dec()
		w.messages.WithLabelValues(outcome).Inc()
		w.duration.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
	}
}

// DeadLettered counts a message sent to the DLQ with class.
func (w *WorkerMetrics) DeadLettered(class string) { w.dead.WithLabelValues(class).Inc() }

// Decided counts a request of eventType this process made terminal.
func (w *WorkerMetrics) Decided(eventType string) { w.decided.WithLabelValues(eventType).Inc() }

// Outcome is the outcome label of a delivery: retryable when it is not
// acked; waiting for an arrival candidate whose message was continued;
// else by the request's status (a lottery entry collected for the draw is
// a success of its delivery); final for FAILED_FINAL, a malformed message
// or an unknown request.
func Outcome(out asyncevent.Outcome) string {
	switch {
	case !out.Ack:
		return Retryable
	case out.Result == "waiting":
		return Waiting
	case out.Status == asyncevent.StatusSucceeded, out.Status == asyncevent.StatusProcessing:
		return Succeeded
	case out.Status == asyncevent.StatusRejected:
		return Rejected
	}
	return Final
}
