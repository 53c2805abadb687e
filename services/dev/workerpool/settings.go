package workerpool

import (
	"time"

	"github.com/pacerhq/pacer/sdk/autoscale"
	"github.com/pacerhq/pacer/services/internal/config"
)

// Settings are the local autoscaler's settings (`make run`).
type Settings struct {
	// WorkerBin is the asyncevent-worker binary ("": next to the running
	// executable).
	WorkerBin         string
	Min, Max          int
	AcceptableLatency time.Duration
	ProcessingTime    time.Duration
	ScaleInWindow     time.Duration
	Interval          time.Duration
}

// Declare declares the settings on s.
func (st *Settings) Declare(s *config.Set) {
	s.String(&st.WorkerBin, "worker-bin", "PACER_DEV_WORKER_BIN", "", "the asyncevent-worker binary the autoscaler starts (empty: asyncevent-worker next to pacer-dev, which `make run` builds); when it is missing one worker runs in-process, unscaled")
	s.Int(&st.Min, "workers-min", "PACER_DEV_WORKERS_MIN", 1, "fewest worker processes")
	s.Int(&st.Max, "workers-max", "PACER_DEV_WORKERS_MAX", 4, "most worker processes")
	s.Duration(&st.AcceptableLatency, "acceptable-latency", "PACER_DEV_ACCEPTABLE_LATENCY", 10*time.Second, "how long a message may wait: the pool is sized to clear its backlog within this")
	s.Duration(&st.ProcessingTime, "processing-time", "PACER_DEV_PROCESSING_TIME", 200*time.Millisecond, "time one message takes in one concurrency slot (measured: docs/autoscaling.md)")
	s.Duration(&st.ScaleInWindow, "scale-in-window", "PACER_DEV_SCALE_IN_WINDOW", 30*time.Second, "scale in only to the highest recommendation of this window")
	s.Duration(&st.Interval, "autoscale-every", "PACER_DEV_AUTOSCALE_EVERY", 2*time.Second, "time between evaluations")
}

// Autoscale returns the autoscale.Config of workers with concurrency
// slots each.
func (st *Settings) Autoscale(concurrency int) autoscale.Config {
	return autoscale.Config{AcceptableLatency: st.AcceptableLatency, ProcessingTime: st.ProcessingTime, Concurrency: concurrency,
		Min: st.Min, Max: st.Max, ScaleInWindow: st.ScaleInWindow}
}
