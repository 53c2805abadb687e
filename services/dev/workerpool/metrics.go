package workerpool

import "github.com/prometheus/client_golang/prometheus"

// Metrics is a local worker pool's gauges (services/dev/workerpool):
// pacer_workers_desired and pacer_workers_running.
type Metrics struct {
	desired, running prometheus.Gauge
}

// NewMetrics registers the pool gauges on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	p := &Metrics{
		desired: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pacer_workers_desired",
			Help: "Workers the autoscaler wants now (autoscale.Decision.Desired of the last evaluation).",
		}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pacer_workers_running",
			Help: "Worker processes alive now.",
		}),
	}
	reg.MustRegister(p.desired, p.running)
	return p
}

// Desired sets pacer_workers_desired.
func (p *Metrics) Desired(n int) { p.desired.Set(float64(n)) }

// Running sets pacer_workers_running.
func (p *Metrics) Running(n int) { p.running.Set(float64(n)) }
