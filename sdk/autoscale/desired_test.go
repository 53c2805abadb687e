package autoscale

import (
	"math"
	"strings"
	"testing"
	"time"
)

// worked is docs/autoscaling.md's worked example: 60 s acceptable latency,
// 100 ms per message, 10 at once → 6000 messages per worker.
var worked = Config{AcceptableLatency: time.Minute, ProcessingTime: 100 * time.Millisecond, Concurrency: 10, Min: 1, Max: 20}

func TestTargetBacklogPerWorker(t *testing.T) {
	cases := []struct {
		cfg  Config
		want float64
	}{
		{worked, 6000},
		{Config{AcceptableLatency: 5 * time.Second, ProcessingTime: 20 * time.Millisecond, Concurrency: 1}, 250},
		{Config{AcceptableLatency: 2 * time.Second, ProcessingTime: 50 * time.Millisecond, Concurrency: 5}, 200},
		{Config{AcceptableLatency: time.Second, ProcessingTime: 3 * time.Second, Concurrency: 1}, 1.0 / 3},
	}
	for _, c := range cases {
		if got := c.cfg.TargetBacklogPerWorker(); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%+v: target %v, want %v", c.cfg, got, c.want)
		}
	}
}

func TestDesired(t *testing.T) {
	slow := Config{AcceptableLatency: time.Second, ProcessingTime: 3 * time.Second, Concurrency: 1, Min: 1, Max: 1000}
	cases := []struct {
		name string
		cfg  Config
		load Load
		want int
	}{
		{"empty queue, no worker: Min", worked, Load{}, 1},
		{"empty queue, many workers: Min", worked, Load{Running: 7}, 1},
		{"empty queue, higher Min", Config{AcceptableLatency: time.Minute, ProcessingTime: time.Second, Concurrency: 1, Min: 3, Max: 5}, Load{}, 3},
		{"one message", worked, Load{Visible: 1}, 1},
		{"exactly one worker's target", worked, Load{Visible: 6000}, 1},
		{"one over the target", worked, Load{Visible: 6001}, 2},
		{"in-flight counts as backlog", worked, Load{Visible: 5000, InFlight: 1001}, 2},
		{"running workers do not change the answer", worked, Load{Visible: 6001, Running: 9}, 2},
		{"docs example", worked, Load{Visible: 9000, InFlight: 100, Running: 1}, 2},
		{"spike", worked, Load{Visible: 50_000, InFlight: 200}, 9},
		{"capped at Max", worked, Load{Visible: 10_000_000}, 20},
		{"huge backlog does not overflow", worked, Load{Visible: math.MaxInt}, 20},
		{"negative counts are 0", worked, Load{Visible: -5, InFlight: -1}, 1},
		{"target below one message", slow, Load{Visible: 10}, 30},
		{"Min equals Max", Config{AcceptableLatency: time.Minute, ProcessingTime: time.Second, Concurrency: 1, Min: 4, Max: 4}, Load{Visible: 1_000_000}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := Desired(c.cfg, c.load); got != c.want {
				t.Errorf("Desired(%+v) = %d, want %d", c.load, got, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"AcceptableLatency", func(c *Config) { c.AcceptableLatency = 0 }},
		{"ProcessingTime", func(c *Config) { c.ProcessingTime = -time.Second }},
		{"Concurrency", func(c *Config) { c.Concurrency = 0 }},
		{"Min", func(c *Config) { c.Min = 0 }},
		{"Max", func(c *Config) { c.Max = 0 }},
		{"ScaleInWindow", func(c *Config) { c.ScaleInWindow = -time.Second }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := worked
			c.edit(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatalf("Validate accepted %+v", cfg)
			}
			if _, ferr := NewController(cfg, time.Now); ferr == nil {
				t.Errorf("NewController accepted %+v", cfg)
			}
			if got := err.Error(); !strings.Contains(got, c.name) {
				t.Errorf("error %q does not name %s", got, c.name)
			}
		})
	}
	if err := worked.Validate(); err != nil {
		t.Errorf("worked example: %v", err)
	}
}
