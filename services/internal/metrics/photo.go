package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Photo is PhotoService's metrics: photos ingested or refused, and search
// latency by kind. It is the domain's photo.Observer.
type Photo struct {
	ingested *prometheus.CounterVec
	search   *prometheus.HistogramVec
}

// NewPhoto registers the photo metrics on reg, the ingest counters at 0.
func NewPhoto(reg prometheus.Registerer) *Photo {
	p := &Photo{
		ingested: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_photo_ingest_photos_total",
			Help: "Photos in ingest calls (single and batch), by outcome: ingested (stored, now or already), refused (not stored).",
		}, []string{"outcome"}),
		search: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pacer_photo_search_duration_seconds",
			Help:    "Photo search latency including Postgres and DynamoDB, by kind (bib, photographer, gallery, public_bib).",
			Buckets: callBuckets,
		}, []string{"kind"}),
	}
	reg.MustRegister(p.ingested, p.search)
	p.ingested.WithLabelValues("ingested")
	p.ingested.WithLabelValues("refused")
	return p
}

// Ingested counts the n photos of an ingest call: stored ones as
// ingested, the others as refused.
func (p *Photo) Ingested(n, stored int) {
	p.ingested.WithLabelValues("ingested").Add(float64(stored))
	p.ingested.WithLabelValues("refused").Add(float64(n - stored))
}

// Searched observes one search of kind that took d.
func (p *Photo) Searched(kind string, d time.Duration) {
	p.search.WithLabelValues(kind).Observe(d.Seconds())
}
