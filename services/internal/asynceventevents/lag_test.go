package asynceventevents

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/sdk/ddb/stream"
)

// The lag is the age of the oldest open shard's progress: it stays small
// while every shard keeps reporting, grows while one is stuck, forgets a
// shard that ended, and before any progress counts from the start.
func TestLagFollowsTheSlowestShard(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	l := NewLag(prometheus.NewRegistry())
	l.now, l.last = func() time.Time { return now }, t0

	steps := []struct {
		at       time.Duration // now, after t0
		progress []stream.Progress
		want     float64
	}{
		{10 * time.Second, nil, 10}, // nothing read yet: since the start
		{11 * time.Second, []stream.Progress{{Shard: "a", Through: t0.Add(10 * time.Second)}, {Shard: "b", Through: t0.Add(11 * time.Second)}}, 1},
		// b keeps reading, a is stuck on a batch it cannot hand over.
		{10 * time.Minute, []stream.Progress{{Shard: "b", Through: t0.Add(10 * time.Minute)}}, 10*60 - 10},
		// a catches up through a backlog: its last batch's change is
		// a minute old.
		{11 * time.Minute, []stream.Progress{{Shard: "a", Through: t0.Add(10 * time.Minute)}, {Shard: "b", Through: t0.Add(11 * time.Minute)}}, 60},
		// a ends; its child has not read yet: b alone counts.
		{12 * time.Minute, []stream.Progress{{Shard: "a", Through: t0.Add(11 * time.Minute), Ended: true}, {Shard: "b", Through: t0.Add(12 * time.Minute)}}, 0},
		// b ends too: since the last progress of any shard.
		{13 * time.Minute, []stream.Progress{{Shard: "b", Through: t0.Add(12 * time.Minute), Ended: true}}, 60},
	}
	for i, s := range steps {
		now = t0.Add(s.at)
		for _, p := range s.progress {
			l.Progress(p)
		}
		if got := l.Seconds(); got != s.want {
			t.Errorf("step %d: lag %v s, want %v", i, got, s.want)
		}
	}
}
