package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

// RateLimited counts the calls an API's rate limits refused
// (pacer_rate_limited_total, docs/metrics.md).
type RateLimited struct{ c *prometheus.CounterVec }

// Series is one series of pacer_rate_limited_total: a class and what
// limits it.
type Series struct {
	Class string
	By    ratelimit.By
}

// NewRateLimited registers the counter on reg with each of series at 0.
func NewRateLimited(reg prometheus.Registerer, series ...Series) *RateLimited {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pacer_rate_limited_total",
		Help: "Calls refused 429 by the rate limits, by class (participate, poll; name-search and public-search on photo-api) and what limited them (user, address; event_address: an event's own budget)."}, []string{"class", "by"})
	reg.MustRegister(c)
	for _, s := range series {
		c.WithLabelValues(s.Class, string(s.By))
	}
	return &RateLimited{c: c}
}

// Refused counts one refusal (ratelimit.Config.Refused).
func (r *RateLimited) Refused(class string, by ratelimit.By) {
	r.c.WithLabelValues(class, string(by)).Inc()
}
