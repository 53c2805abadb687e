package metrics

import "github.com/prometheus/client_golang/prometheus"

// Pool is a local worker pool's gauges (services/internal/workerpool):
// pacer_workers_desired and pacer_workers_running.
type Pool struct {
	desired, running prometheus.Gauge
}

// NewPool registers the pool gauges on reg.
func NewPool(reg prometheus.Registerer) *Pool {
	p := &Pool{
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
func (p *Pool) Desired(n int) { p.desired.Set(float64(n)) }

// Running sets pacer_workers_running.
func (p *Pool) Running(n int) { p.running.Set(float64(n)) }
