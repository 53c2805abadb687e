package metrics_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

// Start writes the catalogue's metrics on a timer and once more when
// stopped, so that what was counted last is not lost; off, it writes
// nothing; on, it needs a stage.
func TestEMFStart(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	msgs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pacer_worker_messages_total", Help: "h"}, []string{"outcome"})
	reg.MustRegister(msgs)
	log := slog.New(slog.DiscardHandler)

	var off metricstest.Lines
	stop, err := metrics.EMF{Out: &off, Every: time.Millisecond}.Start(reg, log)
	if err != nil {
		t.Fatal(err)
	}
	stop() // a writer that ignored On would write its last lines now

	if off.String() != "" {
		t.Errorf("off, it wrote %q", off.String())
	}
	if _, err := (metrics.EMF{On: true}).Start(reg, log); err == nil {
		t.Error("on without a stage: no error")
	}

	var on metricstest.Lines
	stop, err = metrics.EMF{On: true, Stage: "prod", Out: &on, Every: time.Hour}.Start(reg, log)
	if err != nil {
		t.Fatal(err)
	}
	msgs.WithLabelValues("final").Add(5)
	stop()
	ds := on.Parse(t)
	if len(ds) != 1 || ds[0].Namespace != alarm.Namespace || ds[0].Value != 5 || ds[0].Dimensions[alarm.StageDimension] != "prod" || ds[0].Dimensions["outcome"] != "final" {
		t.Errorf("stopped after 5 final messages: %+v, want them in one datapoint", ds)
	}
}
