package main

import (
	"strings"
	"testing"
)

// The polls' figures: counts per participation, 304s, polls after a
// Retry-After that still found the request undecided, and how late the
// allocator's decisions came after the moment the hint named (only the
// allocator's: a delivery-ordered decision has no such moment).
func TestPollStats(t *testing.T) {
	var p PollStats
	if p.summary(10) != "" {
		t.Error("no polls, yet a summary line")
	}
	for range 30 {
		p.add(200, false)
	}
	for range 10 {
		p.add(304, false)
	}
	p.add(200, true)
	p.add(200, true)
	q := maxLateness.Milliseconds()
	p.decided("ALLOCATED", 1000, 1000+q+100)
	p.decided("ALLOCATED", 1000, 1000+q+300)
	p.decided("ALLOCATED", 1000, 1000+q+200)
	p.decided("", 1000, 1000+q+9000) // delivery-ordered: not the hint's
	p.finish()
	if p.Polls != 42 || p.NotModified != 10 || p.AfterHint != 2 {
		t.Errorf("counts %+v", p)
	}
	if p.LagP50Ms != 200 || p.LagMaxMs != 300 {
		t.Errorf("lag p50 %v max %v, want 200 and 300", p.LagP50Ms, p.LagMaxMs)
	}
	want := "polls: 4.2 per participation, 1.0 answered 304; 0.20 made after the Retry-After still found it undecided; the allocator decided 200/300/300 ms"
	if s := p.summary(10); !strings.Contains(s, want) {
		t.Errorf("summary %q, want %q", s, want)
	}
}
