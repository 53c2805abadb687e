package asynceventbackend

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
)

// QueueReader reads the main queue's and the DLQ's counts
// (sqsqueue.Queue.Counts).
type QueueReader func(ctx context.Context) (main, dlq sqsqueue.Counts, err error)

// QueueCacheTTL is how long a read of the queue counts serves scrapes.
const QueueCacheTTL = 5 * time.Second

// QueueGauge is the pacer_queue_messages gauge, read from SQS at scrape time
// through a cache of QueueCacheTTL, so that scrapes do not multiply SQS
// calls. A failed read is logged and the scrape has no queue series.
type QueueGauge struct {
	read QueueReader
	log  *slog.Logger
	desc *prometheus.Desc

	mu        sync.Mutex
	at        time.Time
	main, dlq sqsqueue.Counts
}

// NewQueueGauge registers the queue gauge on reg, reading through read.
func NewQueueGauge(reg prometheus.Registerer, read QueueReader, log *slog.Logger) *QueueGauge {
	q := &QueueGauge{read: read, log: log, desc: prometheus.NewDesc("pacer_queue_messages",
		"SQS approximate message counts of the main queue and the DLQ, by state (visible, in_flight, delayed).",
		[]string{"queue", "state"}, nil)}
	reg.MustRegister(q)
	return q
}

// Describe implements prometheus.Collector.
func (q *QueueGauge) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect implements prometheus.Collector.
func (q *QueueGauge) Collect(ch chan<- prometheus.Metric) {
	main, dlq, ok := q.counts()
	if !ok {
		return
	}
	for _, c := range []struct {
		queue string
		n     sqsqueue.Counts
	}{{"main", main}, {"dlq", dlq}} {
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(c.n.Visible), c.queue, "visible")
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(c.n.InFlight), c.queue, "in_flight")
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(c.n.Delayed), c.queue, "delayed")
	}
}

// counts returns the cached counts, reading them again when older than
// QueueCacheTTL. Concurrent scrapes wait for one read.
func (q *QueueGauge) counts() (main, dlq sqsqueue.Counts, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.at.IsZero() && time.Since(q.at) < QueueCacheTTL {
		return q.main, q.dlq, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	m, d, err := q.read(ctx)
	if err != nil {
		q.log.Warn("metrics: reading the queue counts", "err", err)
		return main, dlq, false
	}
	q.main, q.dlq, q.at = m, d, time.Now()
	return m, d, true
}
