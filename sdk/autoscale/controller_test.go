package autoscale

import (
	"slices"
	"testing"
	"time"
)

// clock is a fake clock the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestController(t *testing.T, window time.Duration) (*Controller, *clock) {
	t.Helper()
	cfg := worked
	cfg.ScaleInWindow = window
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, err := NewController(cfg, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

// run feeds the controller one backlog per step, step apart, with the
// running count following each decision (as a pool that starts and stops
// workers at once would), and returns the decisions' Desired counts.
func run(c *Controller, clk *clock, step time.Duration, running int, backlogs []int) []int {
	var out []int
	for _, b := range backlogs {
		d := c.Next(Load{Visible: b, Running: running})
		out = append(out, d.Desired)
		running = d.Desired
		clk.advance(step)
	}
	return out
}

func TestControllerNoFlappingAroundThreshold(t *testing.T) {
	// The backlog oscillates around 2 workers' target (12000) every 15 s.
	oscillating := []int{12_001, 11_999, 12_001, 11_999, 12_001, 11_999, 12_001, 11_999}

	damped, clk := newTestController(t, 5*time.Minute)
	if got, want := run(damped, clk, 15*time.Second, 1, oscillating), []int{3, 3, 3, 3, 3, 3, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("damped: %v, want %v", got, want)
	}

	// Without a window the same input flaps every evaluation: what the
	// window is for.
	undamped, clk := newTestController(t, 0)
	if got, want := run(undamped, clk, 15*time.Second, 1, oscillating), []int{3, 2, 3, 2, 3, 2, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("undamped: %v, want %v", got, want)
	}
}

func TestControllerScalesOutAtOnceAndInAfterWindow(t *testing.T) {
	c, clk := newTestController(t, time.Minute)
	// Spike: 1 → 9 at once. Drain: recommendations fall to 4, then 1, but
	// the pool stays at the window's highest until the 9 leaves it (60 s
	// after it was made), then the 4 (60 s after it).
	backlogs := []int{0, 50_000, 50_000, 20_000, 20_000, 0, 0, 0, 0, 0, 0}
	got := run(c, clk, 20*time.Second, 1, backlogs)
	// t=0:1  20:9  40:9  60:9(rec 4)  80:9(rec 4; the 9 of t=40 is 40 s old)
	// 100:4(9 of t=40 gone at 100; 4s of 60,80)  120:4  140:1(4 of t=80 is 60 s old)
	want := []int{1, 9, 9, 9, 9, 4, 4, 1, 1, 1, 1}
	if !slices.Equal(got, want) {
		t.Errorf("desired %v, want %v", got, want)
	}
}

func TestControllerBounds(t *testing.T) {
	c, _ := newTestController(t, time.Hour)
	cases := []struct {
		name string
		load Load
		want int
	}{
		{"no worker and no message: start Min", Load{}, 1},
		{"no worker and a backlog: start them", Load{Visible: 20_000}, 4},
		{"more running than Max: down to Max at once", Load{Visible: 10_000_000, Running: 30}, 20},
		{"window holds 20 but only 3 run: keep 3", Load{Running: 3}, 3},
	}
	for _, tc := range cases {
		if d := c.Next(tc.load); d.Desired != tc.want {
			t.Errorf("%s: Next(%+v) = %+v, want Desired %d", tc.name, tc.load, d, tc.want)
		}
	}
}

func TestControllerReportsMetric(t *testing.T) {
	c, _ := newTestController(t, 0)
	d := c.Next(Load{Visible: 9000, InFlight: 100, Running: 2})
	if d.Recommended != 2 || d.Desired != 2 || d.BacklogPerWorker != 4550 || d.Target != 6000 {
		t.Errorf("Next = %+v, want Recommended 2, Desired 2, BacklogPerWorker 4550, Target 6000", d)
	}
	if d := c.Next(Load{Running: 0, Visible: 7}); d.BacklogPerWorker != 7 {
		t.Errorf("no worker: BacklogPerWorker %v, want the whole backlog 7", d.BacklogPerWorker)
	}
}

// Hold is the windowed recommendation whatever runs: out at once, in to
// the highest recommendation of the window, and the running count
// (absent from what workers know) changes nothing.
func TestControllerHold(t *testing.T) {
	c, clk := newTestController(t, time.Minute)
	var got []int
	for i, b := range []int{0, 50_000, 20_000, 20_000, 0, 0, 0, 0} {
		got = append(got, c.Hold(Load{Visible: b, Running: i % 3}))
		clk.advance(20 * time.Second)
	}
	// t=0:1  20:9  40:9(rec 4)  60:9(rec 4; the 9 is 40 s old)  80:4(the 9
	// of t=20 is 60 s old)  100:4  120:1(the 4 of t=60 is 60 s old)  140:1
	if want := []int{1, 9, 9, 9, 4, 4, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("Hold %v, want %v", got, want)
	}
}
