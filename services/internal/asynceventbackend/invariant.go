package asynceventbackend

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// InvariantCacheTTL is how long a capacity invariant check serves scrapes;
// InvariantMaxEvents bounds the open events one check reads.
const (
	InvariantCacheTTL  = 30 * time.Second
	InvariantMaxEvents = 100
)

// CapacityChecker checks the capacity invariant on up to max open
// FIRST_COME events (asyncevent.Operations.CheckCapacity).
type CapacityChecker func(ctx context.Context, max int) (checked int, broken []string, err error)

// Invariant is pacer_event_capacity_invariant_ok: 1 when every open
// FIRST_COME event checked keeps capacityTotal − capacityRemaining ==
// #SUCCEEDED, else 0. The check runs when the registry is gathered (a
// scrape, or an EMF flush: EMF) at most every InvariantCacheTTL;
// the events that fail are logged at WARN (ids are not labels). A failed
// check is logged and the gathering has no series.
type Invariant struct {
	check CapacityChecker
	log   *slog.Logger
	desc  *prometheus.Desc

	mu sync.Mutex
	at time.Time
	ok bool
}

// NewInvariant registers the gauge on reg, checking through check.
func NewInvariant(reg prometheus.Registerer, check CapacityChecker, log *slog.Logger) *Invariant {
	i := &Invariant{check: check, log: log, desc: prometheus.NewDesc("pacer_event_capacity_invariant_ok",
		"1 if every open FIRST_COME event has capacityTotal − capacityRemaining == #SUCCEEDED, else 0 (checked at most every 30 s, up to 100 events).",
		nil, nil)}
	reg.MustRegister(i)
	return i
}

// Describe implements prometheus.Collector.
func (i *Invariant) Describe(ch chan<- *prometheus.Desc) { ch <- i.desc }

// Collect implements prometheus.Collector.
func (i *Invariant) Collect(ch chan<- prometheus.Metric) {
	ok, fresh := i.result()
	if !fresh {
		return
	}
	v := 0.0
	if ok {
		v = 1
	}
	ch <- prometheus.MustNewConstMetric(i.desc, prometheus.GaugeValue, v)
}

func (i *Invariant) result() (ok, known bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.at.IsZero() && time.Since(i.at) < InvariantCacheTTL {
		return i.ok, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	checked, broken, err := i.check(ctx, InvariantMaxEvents)
	if err != nil {
		i.log.Warn("metrics: checking the capacity invariant", "err", err)
		return false, false
	}
	if len(broken) > 0 {
		i.log.Warn("capacity invariant broken", "events", broken, "checked", checked)
	}
	i.ok, i.at = len(broken) == 0, time.Now()
	return i.ok, true
}
