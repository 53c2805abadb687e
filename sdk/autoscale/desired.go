package autoscale

import (
	"math"
	"math/bits"
)

// Load is what the queue and the pool look like at one evaluation.
type Load struct {
	Visible  int // messages waiting (SQS ApproximateNumberOfMessages)
	InFlight int // messages received and not yet deleted (…NotVisible)
	Running  int // workers alive now
}

// Backlog is the work outstanding: visible plus in-flight messages
// (negative counts, which no queue reports, count as 0).
func (l Load) Backlog() int { return max(l.Visible, 0) + max(l.InFlight, 0) }

// BacklogPerWorker is the backlog divided by the running workers; with no
// worker running it is the whole backlog (as if one were).
func (l Load) BacklogPerWorker() float64 {
	return float64(l.Backlog()) / float64(max(l.Running, 1))
}

// Desired is the number of workers that clears l's backlog within
// c.AcceptableLatency: ⌈backlog / c.TargetBacklogPerWorker()⌉, kept within
// [c.Min, c.Max]. It is exact integer arithmetic (no float rounding at the
// thresholds) and does not depend on l.Running: target tracking's
// ⌈running × (backlog/running) / target⌉ is the same number. c must be
// valid (Config.Validate).
func Desired(c Config, l Load) int {
	// backlog × ProcessingTime / (AcceptableLatency × Concurrency), rounded
	// up, in 128-bit so a huge backlog cannot overflow.
	den := uint64(c.AcceptableLatency) * uint64(c.Concurrency)
	if den/uint64(c.Concurrency) != uint64(c.AcceptableLatency) { // overflow: one worker clears any backlog
		return c.Min
	}
	hi, lo := bits.Mul64(uint64(l.Backlog()), uint64(c.ProcessingTime))
	if hi >= den {
		return c.Max
	}
	q, r := bits.Div64(hi, lo, den)
	if r > 0 {
		q++
	}
	if q > math.MaxInt32 {
		return c.Max
	}
	return min(max(int(q), c.Min), c.Max)
}
