package main

import (
	"strings"
	"testing"
	"time"
)

// allowedMax is a process's share of a budget's burst plus its share of
// the rate over the phase (and one call of slack for the clock).
func TestAllowedMax(t *testing.T) {
	for _, c := range []struct {
		budget   string
		replicas int
		d        time.Duration
		want     int
	}{
		{"5/s", 1, 10 * time.Second, 5 + 50 + 1},
		{"5/s", 2, 10 * time.Second, 3 + 25 + 1},
		{"30/m", 1, 10 * time.Second, 30 + 5 + 1},
		{"off", 1, time.Second, -1},
		{"", 1, time.Second, -1},
	} {
		if got := allowedMax(c.budget, c.replicas, c.d); got != c.want {
			t.Errorf("allowedMax(%q, %d, %v) = %d, want %d", c.budget, c.replicas, c.d, got, c.want)
		}
	}
}

// Check fails the scenario on a person limited, a scripted client past
// its budget or answered otherwise than 429 with Retry-After, and on the
// people's p95 rising past the ratio by more than 20 ms; not on a p95
// that moved by a few milliseconds.
func TestScriptedCheck(t *testing.T) {
	good := func() *Scripted {
		return &Scripted{
			Baseline: PeopleStats{ParticipateP95Ms: 10, PollP95Ms: 5},
			Attacked: PeopleStats{ParticipateP95Ms: 14, PollP95Ms: 9},
			Hammer:   Limited{Allowed: 56, AllowedMax: 56, Refused: 1900},
			Crowd:    Limited{Allowed: 36, AllowedMax: 36, Refused: 460},
		}
	}
	s := good()
	if s.Check(1.5); len(s.Failed) != 0 {
		t.Fatalf("a run within every bound failed: %v", s.Failed)
	}
	for _, c := range []struct {
		want   string
		mutate func(*Scripted)
	}{
		{"answered 429", func(s *Scripted) { s.Attacked.Limited = 1 }},
		{"people's calls failed", func(s *Scripted) { s.Baseline.Errors = 2 }},
		{"one user hammering polls got 57", func(s *Scripted) { s.Hammer.Allowed = 57 }},
		{"many users from one address had 1", func(s *Scripted) { s.Crowd.Errors = 1 }},
		{"participation p95 rose", func(s *Scripted) { s.Attacked.ParticipateP95Ms = 40 }},
		{"poll p95 rose", func(s *Scripted) { s.Attacked.PollP95Ms = 30 }},
	} {
		s := good()
		c.mutate(s)
		if s.Check(1.5); !strings.Contains(strings.Join(s.Failed, "; "), c.want) {
			t.Errorf("want a failure saying %q, got %v", c.want, s.Failed)
		}
	}
}
