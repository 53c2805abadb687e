package main

import (
	"fmt"
	"net/http"
	"sort"
)

// PollStats is what the clients' status polls saw in a run: how many
// they made, how many were answered 304 (the ETag sent back matched), how
// many were made after a Retry-After ran out and still found the request
// undecided, and, for requests the arrival allocator decided, how long
// after the moment the Retry-After named (queuedAt + MaxLateness) the
// decision landed: the hint's own lateness.
type PollStats struct {
	Polls       int `json:"polls"`
	NotModified int `json:"notModified"`
	// AfterHint counts polls made once the request's last Retry-After had
	// run out that still found it undecided.
	AfterHint int `json:"afterHintUndecided"`
	// Lag is finishedAt − (queuedAt + MaxLateness) of the allocator's
	// decisions, in ms: p50, p95 and max.
	LagP50Ms float64 `json:"decidedAfterHintP50Ms"`
	LagP95Ms float64 `json:"decidedAfterHintP95Ms"`
	LagMaxMs float64 `json:"decidedAfterHintMaxMs"`
	lags     []float64
}

// add counts one poll answered code; afterHint says it was made after
// the last Retry-After and found the request undecided.
func (p *PollStats) add(code int, afterHint bool) {
	p.Polls++
	if code == http.StatusNotModified {
		p.NotModified++
	}
	if afterHint {
		p.AfterHint++
	}
}

// decided notes a terminal answer: a request the allocator decided
// (uiPhase ALLOCATED) adds its lag.
func (p *PollStats) decided(phase string, queuedAt, finishedAt int64) {
	if phase == "ALLOCATED" && queuedAt > 0 && finishedAt > 0 {
		p.lags = append(p.lags, float64(finishedAt-queuedAt-maxLateness.Milliseconds()))
	}
}

// finish computes the lag's percentiles.
func (p *PollStats) finish() {
	sort.Float64s(p.lags)
	p.LagP50Ms, p.LagP95Ms, p.LagMaxMs = pct(p.lags, .5), pct(p.lags, .95), pct(p.lags, 1)
}

// summary is the polls' line of a run's summary.
func (p *PollStats) summary(accepted int) string {
	if p.Polls == 0 {
		return ""
	}
	per := func(n int) float64 { return float64(n) / float64(max(accepted, 1)) }
	s := fmt.Sprintf("  polls: %.1f per participation, %.1f answered 304; %.2f made after the Retry-After still found it undecided",
		per(p.Polls), per(p.NotModified), per(p.AfterHint))
	if len(p.lags) > 0 {
		s += fmt.Sprintf("; the allocator decided %.0f/%.0f/%.0f ms (p50/p95/max) after the moment Retry-After names", p.LagP50Ms, p.LagP95Ms, p.LagMaxMs)
	}
	return s + "\n"
}
