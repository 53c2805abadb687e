package autoscale

import (
	"time"
)

// Decision is one evaluation's outcome.
type Decision struct {
	// Desired is how many workers should run now.
	Desired int
	// Recommended is Desired(cfg, load) for this evaluation alone, before
	// scale-in damping.
	Recommended int
	// BacklogPerWorker and Target are the tracked metric and its target,
	// for progress lines and metrics.
	BacklogPerWorker, Target float64
}

// Controller turns a sequence of loads into worker counts: it scales out at
// once to the recommendation and scales in only to the highest
// recommendation of the last ScaleInWindow. It is not safe for concurrent
// use (one control loop owns it).
type Controller struct {
	cfg     Config
	now     func() time.Time
	history []recommendation // within ScaleInWindow, oldest first
}

type recommendation struct {
	at      time.Time
	workers int
}

// NewController returns a controller for cfg; now is its clock (time.Now,
// or a fake in tests).
func NewController(cfg Config, now func() time.Time) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Controller{cfg: cfg, now: now}, nil
}

// Config returns the controller's settings.
func (c *Controller) Config() Config { return c.cfg }

// Next evaluates l and returns how many workers should run.
func (c *Controller) Next(l Load) Decision {
	now := c.now()
	rec := Desired(c.cfg, l)
	d := Decision{Recommended: rec, BacklogPerWorker: l.BacklogPerWorker(), Target: c.cfg.TargetBacklogPerWorker()}

	// Keep the recommendations of the window (and this one).
	keep := c.history[:0]
	for _, h := range c.history {
		if now.Sub(h.at) < c.cfg.ScaleInWindow {
			keep = append(keep, h)
		}
	}
	c.history = append(keep, recommendation{at: now, workers: rec})

	running := min(max(l.Running, 0), c.cfg.Max) // above Max (settings lowered): come down to it at once
	if rec >= running {
		d.Desired = rec
		return d
	}
	highest := rec
	for _, h := range c.history {
		highest = max(highest, h.workers)
	}
	d.Desired = min(highest, running)
	return d
}
