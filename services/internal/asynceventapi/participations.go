package asynceventapi

import "github.com/prometheus/client_golang/prometheus"

// Participation outcomes (the outcome label of pacer_participations_total).
const (
	New       = "new"
	Duplicate = "duplicate"
	Refused   = "refused"
)

// Participations is pacer_participations_total: participation requests by
// answer.
type Participations struct {
	total *prometheus.CounterVec
}

// NewParticipations registers the counter on reg, at 0 for new, duplicate
// and refused for each of reasons (the problem codes the service may answer
// a participation with).
func NewParticipations(reg prometheus.Registerer, reasons []string) *Participations {
	p := &Participations{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pacer_participations_total",
		Help: "Participation requests by outcome (new, duplicate, refused) and reason (none, or the problem code of a refusal).",
	}, []string{"outcome", "reason"})}
	reg.MustRegister(p.total)
	p.total.WithLabelValues(New, "none")
	p.total.WithLabelValues(Duplicate, "none")
	for _, r := range reasons {
		p.total.WithLabelValues(Refused, r)
	}
	return p
}

// Accepted counts an accepted participation (a duplicate or a new one).
func (p *Participations) Accepted(duplicate bool) {
	if duplicate {
		p.total.WithLabelValues(Duplicate, "none").Inc()
		return
	}
	p.total.WithLabelValues(New, "none").Inc()
}

// Refused counts a refusal with its problem code.
func (p *Participations) Refused(reason string) {
	p.total.WithLabelValues(Refused, reason).Inc()
}
