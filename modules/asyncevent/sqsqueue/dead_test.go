package sqsqueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// A dead letter keeps its tag through peeks (which receive and release
// it) and a class redrive moves only its class.
func TestDeadTagSurvivesPeeks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := open(t)
	for i := range 4 {
		if err := q.Send(ctx, fmt.Sprintf(`{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := q.Receive(ctx, 10, time.Second, time.Minute)
	if err != nil || len(ms) != 4 {
		t.Fatalf("receive %d %v", len(ms), err)
	}
	classes := []asyncevent.DeadClass{asyncevent.DeadThrottled, asyncevent.DeadThrottled, asyncevent.DeadTimeout, asyncevent.DeadConflict}
	for i, m := range ms {
		if err := q.SendDead(ctx, m, classes[i], "CODE"); err != nil {
			t.Fatal(err)
		}
	}
	handles := make([]string, len(ms))
	for i, m := range ms {
		handles[i] = m.ReceiptHandle
	}
	if err := q.Delete(ctx, handles); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		got := map[asyncevent.DeadClass]int{}
		ds, err := q.PeekDead(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			got[d.Class]++
			if d.ErrorCode != "CODE" {
				t.Fatalf("round %d: %+v", round, d)
			}
		}
		if len(ds) != 4 || got[asyncevent.DeadThrottled] != 2 || got[asyncevent.DeadTimeout] != 1 || got[asyncevent.DeadConflict] != 1 {
			t.Fatalf("round %d: %d messages, classes %v", round, len(ds), got)
		}
	}
	res, err := q.RedriveClass(ctx, asyncevent.DeadThrottled, 100)
	if err != nil || res.Moved != 2 || res.Dropped != 0 || res.More {
		t.Fatalf("redrive: %+v %v", res, err)
	}
	if main, dead, err := q.Depths(ctx); err != nil || main != 2 || dead != 2 {
		t.Fatalf("depths %d/%d %v, want 2/2", main, dead, err)
	}
}
