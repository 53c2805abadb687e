package autoscale

import (
	"errors"
	"fmt"
	"time"
)

// Config is a worker pool's scaling settings.
type Config struct {
	// AcceptableLatency is how long a message may wait before a worker
	// finishes it: the pool is sized to clear its backlog within this time.
	AcceptableLatency time.Duration
	// ProcessingTime is how long one message takes in one of a worker's
	// concurrency slots. Measure it: Concurrency / (messages per second one
	// worker drains) is the effective figure, contention included.
	ProcessingTime time.Duration
	// Concurrency is how many messages one worker handles at once.
	Concurrency int
	// Min and Max bound the desired count; Min is at least 1 (an idle
	// queue still has a worker, so a new message is not left waiting for a
	// cold start, and zero workers is what the QueueStalled alarm is for).
	Min, Max int
	// ScaleInWindow is how long a lower recommendation must persist before
	// the Controller scales in: it scales in to the highest recommendation
	// seen within the window. 0 scales in at once.
	ScaleInWindow time.Duration
}

// Validate reports the first setting that is out of range, naming it.
func (c Config) Validate() error {
	switch {
	case c.AcceptableLatency <= 0:
		return fmt.Errorf("autoscale: AcceptableLatency must be > 0, got %v", c.AcceptableLatency)
	case c.ProcessingTime <= 0:
		return fmt.Errorf("autoscale: ProcessingTime must be > 0, got %v", c.ProcessingTime)
	case c.Concurrency < 1:
		return fmt.Errorf("autoscale: Concurrency must be >= 1, got %d", c.Concurrency)
	case c.Min < 1:
		return fmt.Errorf("autoscale: Min must be >= 1, got %d", c.Min)
	case c.Max < c.Min:
		return fmt.Errorf("autoscale: Max (%d) must be >= Min (%d)", c.Max, c.Min)
	case c.ScaleInWindow < 0:
		return errors.New("autoscale: ScaleInWindow must be >= 0")
	}
	return nil
}

// TargetBacklogPerWorker is the backlog one worker clears within
// AcceptableLatency: AcceptableLatency / ProcessingTime × Concurrency. It
// is the target value of ECS target tracking on backlog per task, KEDA's
// SQS queueLength, and the threshold of the QueueBacklogPerWorkerHigh alarm.
func (c Config) TargetBacklogPerWorker() float64 {
	return float64(c.AcceptableLatency) / float64(c.ProcessingTime) * float64(c.Concurrency)
}
