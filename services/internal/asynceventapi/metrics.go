package asynceventapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Job is the scrape job of the API, and the service label of its HTTP metrics.
const Job = "asyncevent-api"

// participationReasons are the problem codes a participation may be
// refused with (see problems).
var participationReasons = []string{"invalid-id", "event-not-found", "event-not-open", "event-closed", "lottery-closed",
	"human-token-missing", "human-check-failed", "human-check-unavailable", "rate-limited", "unavailable", "internal"}

// apiMetrics is the API's registry and the collectors Run wires before
// the backend opens (AWS calls, participations).
type apiMetrics struct {
	reg     *prometheus.Registry
	http    *metrics.HTTP
	limited *metrics.RateLimited
}

// newMetrics registers the API's metrics and hooks the AWS and
// participation ones into cfg's backend settings.
func newMetrics(cfg *Config) *apiMetrics {
	m := &apiMetrics{reg: metrics.NewRegistry()}
	m.http = metrics.NewHTTP(m.reg, Job, problems(nil).Problems()...)
	metrics.NewKeySet(m.reg, server.KeySetState(cfg.Verifier))
	a := metrics.NewAWS(m.reg, cfg.Table)
	if cfg.AWS != nil { // loaded by Run (Config.LoadAWS), unless the clients are given
		a.Attach(cfg.AWS)
	}
	if cfg.ConsumedCapacity {
		cfg.DDBObserver = a
	}
	cfg.Observer = participations{NewParticipations(m.reg, participationReasons)}
	m.limited = NewRateLimited(m.reg)
	cfg.HumanChecks = NewHumanChecks(m.reg)
	return m
}

// NewRateLimited registers pacer_rate_limited_total on reg with the
// API's series at 0: participations and polls by user and by address,
// and participations by an event's own budget.
func NewRateLimited(reg prometheus.Registerer) *metrics.RateLimited {
	var series []metrics.Series
	for _, class := range []string{"participate", "poll"} {
		for _, by := range []ratelimit.By{ratelimit.ByUser, ratelimit.ByAddress} {
			series = append(series, metrics.Series{Class: class, By: by})
		}
	}
	return metrics.NewRateLimited(reg, append(series, metrics.Series{Class: "participate", By: ratelimit.ByEventAddress})...)
}

// HumanChecks counts the participations' human checks by outcome
// (pacer_human_checks_total, docs/metrics.md): the domain's
// HumanCheckObserver.
type HumanChecks struct{ c *prometheus.CounterVec }

// NewHumanChecks registers the counter on reg, every outcome at 0.
func NewHumanChecks(reg prometheus.Registerer) *HumanChecks {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pacer_human_checks_total",
		Help: "Human checks of participations in events that require one, by outcome (passed, failed, missing, unavailable_refused, unavailable_admitted)."}, []string{"outcome"})
	reg.MustRegister(c)
	for _, o := range asyncevent.HumanOutcomes {
		c.WithLabelValues(string(o))
	}
	return &HumanChecks{c: c}
}

// HumanChecked counts one check (asyncevent.HumanCheckObserver).
func (h *HumanChecks) HumanChecked(o asyncevent.HumanOutcome) { h.c.WithLabelValues(string(o)).Inc() }

// serve registers the queue gauge over q and the capacity invariant over
// ops, mounts GET /metrics on mux
// (outside the OpenAPI spec: it is not part of the API) and returns mux
// timed.
func (m *apiMetrics) serve(mux *http.ServeMux, ops *asyncevent.Operations, q *sqsqueue.Queue, log *slog.Logger) http.Handler {
	asynceventbackend.NewQueueGauge(m.reg, q.Counts, log)
	asynceventbackend.NewInvariant(m.reg, ops.CheckCapacity, log)
	mux.Handle("GET "+metrics.Path, metrics.Handler(m.reg))
	return m.http.Wrap(mux)
}

// participations counts Participate's answers by outcome and problem code.
type participations struct{ *Participations }

func (p participations) Participated(a asyncevent.Participation, err error) {
	if err != nil {
		p.Refused(problemCode(err))
		return
	}
	p.Accepted(a.IsDuplicate)
}

// problemCode is the problem type code problem answers err with.
func problemCode(err error) string {
	for _, p := range problemTypes {
		if errors.Is(err, p.Err) {
			return p.Name
		}
	}
	if server.DependencyFailed(err) {
		return "unavailable"
	}
	return "internal"
}
