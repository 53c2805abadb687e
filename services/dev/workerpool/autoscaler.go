package workerpool

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/pacerhq/pacer/sdk/autoscale"
)

// Autoscaler sizes a Pool from queue depth every Interval: it reads the
// queue, asks the Controller (autoscale.Controller: scale out at once,
// scale in damped) and scales the pool to the decision.
type Autoscaler struct {
	Pool       *Pool
	Controller *autoscale.Controller
	// Read returns the main queue's waiting (visible + delayed) and
	// in-flight messages.
	Read func(ctx context.Context) (visible, inFlight int, err error)
	// Interval is the time between evaluations (default 5 s).
	Interval time.Duration
	// Metrics, if set, gets pacer_workers_desired and pacer_workers_running.
	Metrics *Metrics
	// Out, if set, gets a progress line whenever the backlog is not empty
	// or the counts change.
	Out io.Writer
	// Log receives read and scaling errors (default: discarded).
	Log *slog.Logger
	// OnStep, if set, sees each evaluation (tests assert the sequence).
	OnStep func(Step)
}

// Step is one evaluation: the load read, the decision, and the workers
// running once the pool was scaled to it.
type Step struct {
	At                       time.Time // when the controller decided
	Visible, InFlight        int
	Recommended, Desired     int
	Running                  int
	BacklogPerWorker, Target float64
}

// Run evaluates until ctx is cancelled. It leaves the pool as it is; the
// caller closes it.
func (a *Autoscaler) Run(ctx context.Context) {
	if a.Interval <= 0 {
		a.Interval = 5 * time.Second
	}
	if a.Log == nil {
		a.Log = slog.New(slog.DiscardHandler)
	}
	var last Step
	for {
		if s, ok := a.step(ctx); ok {
			if a.Out != nil && (s.Visible+s.InFlight > 0 || s.Desired != last.Desired || s.Running != last.Running) {
				fmt.Fprintf(a.Out, "autoscale: backlog %d (visible %d, in flight %d), per worker %.0f (target %.0f) → desired %d (recommended %d), running %d\n",
					s.Visible+s.InFlight, s.Visible, s.InFlight, s.BacklogPerWorker, s.Target, s.Desired, s.Recommended, s.Running)
			}
			last = s
		}
		if !wait(ctx, a.Interval) {
			return
		}
	}
}

// step runs one evaluation.
func (a *Autoscaler) step(ctx context.Context) (Step, bool) {
	visible, inFlight, err := a.Read(ctx)
	if err != nil {
		if ctx.Err() == nil {
			a.Log.Warn("autoscale: reading the queue; keeping the pool as it is", "err", err)
		}
		return Step{}, false
	}
	running := a.Pool.Running()
	// The step is timed when the controller decides, not after the
	// scaling (stopping a worker gracefully takes up to its stop timeout).
	at := time.Now()
	d := a.Controller.Next(autoscale.Load{Visible: visible, InFlight: inFlight, Running: running})
	if a.Metrics != nil {
		a.Metrics.Desired(d.Desired)
	}
	if err := a.Pool.Scale(d.Desired); err != nil {
		a.Log.Error("autoscale: scaling", "desired", d.Desired, "err", err)
	}
	s := Step{At: at, Visible: visible, InFlight: inFlight, Recommended: d.Recommended, Desired: d.Desired,
		Running: a.Pool.Running(), BacklogPerWorker: d.BacklogPerWorker, Target: d.Target}
	if a.Metrics != nil {
		a.Metrics.Running(s.Running)
	}
	if a.OnStep != nil {
		a.OnStep(s)
	}
	return s, true
}
