package photoapi

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// PhotoMetrics is PhotoService's metrics: photos ingested or refused, and search
// latency by kind. It is the domain's photo.Observer.
type PhotoMetrics struct {
	ingested *prometheus.CounterVec
	search   *prometheus.HistogramVec
}

// NewPhotoMetrics registers the photo metrics on reg, the ingest counters at 0.
func NewPhotoMetrics(reg prometheus.Registerer) *PhotoMetrics {
	p := &PhotoMetrics{
		ingested: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_photo_ingest_photos_total",
			Help: "Photos in ingest calls (single and batch), by outcome: ingested (stored, now or already), refused (not stored).",
		}, []string{"outcome"}),
		search: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pacer_photo_search_duration_seconds",
			Help:    "Photo search latency including Postgres and DynamoDB, by kind (bib, photographer, gallery, public_bib, nearby, public_nearby, name, public_name).",
			Buckets: metrics.CallBuckets,
		}, []string{"kind"}),
	}
	reg.MustRegister(p.ingested, p.search)
	p.ingested.WithLabelValues("ingested")
	p.ingested.WithLabelValues("refused")
	return p
}

// Ingested counts the n photos of an ingest call: stored ones as
// ingested, the others as refused.
func (p *PhotoMetrics) Ingested(n, stored int) {
	p.ingested.WithLabelValues("ingested").Add(float64(stored))
	p.ingested.WithLabelValues("refused").Add(float64(n - stored))
}

// Searched observes one search of kind that took d.
func (p *PhotoMetrics) Searched(kind string, d time.Duration) {
	p.search.WithLabelValues(kind).Observe(d.Seconds())
}
