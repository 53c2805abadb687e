package metrics

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/services/internal/config"
)

// EMFEvery is how often EMF.Start writes: twice a minute, so that every
// one-minute period of an alarm has a datapoint from each process.
const EMFEvery = 30 * time.Second

// EMF ships a binary's metrics to CloudWatch (with EMFWriter): the ones
// the alert catalogue (deploy/alarm.Shipped) names, written to stdout in
// the Embedded Metric Format, which ECS's awslogs driver sends to
// CloudWatch Logs, where they become metrics, with no agent and no
// permission beyond writing logs. Each binary writes those of its
// registry (the APIs their HTTP problems and key set, a worker its
// outcomes, ...). The generated task definitions turn it on; locally and
// on Kubernetes, Prometheus scrapes /metrics instead.
type EMF struct {
	// On turns it on (PACER_METRICS_EMF); Stage is the value of every
	// metric's stage dimension (PACER_METRICS_STAGE).
	On    bool
	Stage string
	// Out receives the lines (default os.Stdout); Every is how often they
	// are written (default EMFEvery).
	Out   io.Writer
	Every time.Duration
}

// DeclareEMF declares the EMF settings on s.
func DeclareEMF(s *config.Set, e *EMF) {
	s.Bool(&e.On, "metrics-emf", "PACER_METRICS_EMF", false,
		"write the metrics CloudWatch alarms read to stdout every 30 s in CloudWatch's Embedded Metric Format (on in the generated ECS task definitions, whose awslogs driver ships them)")
	s.String(&e.Stage, "metrics-stage", "PACER_METRICS_STAGE", "", "the Stage dimension of the metrics PACER_METRICS_EMF writes: the stack's stage (required with it)")
}

// Start writes g's shipped metrics every Every until stop is called; stop
// writes the last increments and returns once the writer has stopped, so
// call it when nothing counts any more (after a graceful shutdown). Off,
// it does nothing and stop is a no-op. Failed writes are logged.
func (e EMF) Start(g prometheus.Gatherer, log *slog.Logger) (stop func(), err error) {
	if !e.On {
		return func() {}, nil
	}
	if e.Stage == "" {
		return nil, errors.New("metrics: PACER_METRICS_EMF needs PACER_METRICS_STAGE")
	}
	shipped, err := alarm.Shipped()
	if err != nil {
		return nil, err
	}
	var ms []EMFMetric
	for _, c := range shipped {
		ms = append(ms, EMFMetric{Namespace: c.Namespace, Name: c.Name, Unit: c.Unit, Dimensions: c.Dimensions})
	}
	out, every := e.Out, e.Every
	if out == nil {
		out = os.Stdout
	}
	if every <= 0 {
		every = EMFEvery
	}
	w := NewEMFWriter(out, g, ms, map[string]string{alarm.StageDimension: e.Stage})
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				if err := w.Flush(time.Now()); err != nil {
					log.Warn("metrics: writing the last EMF lines", "err", err)
				}
				return
			case now := <-t.C:
				if err := w.Flush(now); err != nil {
					log.Warn("metrics: writing EMF lines", "err", err)
				}
			}
		}
	}()
	return func() { close(quit); <-done }, nil
}
