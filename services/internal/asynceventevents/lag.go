package asynceventevents

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/sdk/ddb/stream"
)

// Lag is pacer_events_publisher_lag_seconds: how far behind the table's
// changes the publisher is, the age of the oldest change it has not
// handled. It follows the stream consumer's progress (stream.Progress):
// each shard is handled through the last change of the batch published,
// or through the time of a read that found nothing new, so an idle
// publisher that keeps reading is about one poll behind, and a hung or
// failing one falls behind by the second. Before any read (or between a
// shard's end and its child's first read) it is the time since the last
// progress of any shard, or since the start.
type Lag struct {
	desc *prometheus.Desc
	now  func() time.Time

	mu      sync.Mutex
	through map[string]time.Time // open shards: handled through
	last    time.Time            // the latest progress of any shard, or the start
}

// NewLag registers the gauge on reg.
func NewLag(reg prometheus.Registerer) *Lag {
	l := &Lag{
		desc: prometheus.NewDesc("pacer_events_publisher_lag_seconds",
			"How far behind the table's changes the publisher is: the age of the oldest change it has not handled (0 when caught up, about one poll when idle).", nil, nil),
		now: time.Now, through: map[string]time.Time{},
	}
	l.last = l.now()
	reg.MustRegister(l)
	return l
}

// Progress records a shard's progress; it is a stream.Config.Progress.
func (l *Lag) Progress(p stream.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Ended {
		delete(l.through, p.Shard)
	} else {
		l.through[p.Shard] = p.Through
	}
	if p.Through.After(l.last) {
		l.last = p.Through
	}
}

// Seconds is the lag now.
func (l *Lag) Seconds() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	oldest := l.last
	if len(l.through) > 0 {
		oldest = time.Time{}
		for _, t := range l.through {
			if oldest.IsZero() || t.Before(oldest) {
				oldest = t
			}
		}
	}
	return max(l.now().Sub(oldest).Seconds(), 0)
}

// Describe implements prometheus.Collector.
func (l *Lag) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

// Collect implements prometheus.Collector.
func (l *Lag) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(l.desc, prometheus.GaugeValue, l.Seconds())
}
