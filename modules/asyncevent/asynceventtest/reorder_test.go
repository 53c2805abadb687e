package asynceventtest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// drain sends n messages, then receives and deletes them, batch at a time,
// and returns the order in which they were first delivered.
func drain(t *testing.T, q *asynceventtest.ReorderQueue, n, batch int) []string {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := q.Send(ctx, strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	var order []string
	for q.Len() > 0 {
		msgs, err := q.Receive(ctx, batch, time.Second, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var handles []string
		for _, m := range msgs {
			order = append(order, m.Body)
			handles = append(handles, m.ReceiptHandle)
		}
		if err := q.Delete(ctx, handles); err != nil {
			t.Fatal(err)
		}
	}
	return order
}

// In order, a queue counts no overtaking; shuffled, it counts each first
// delivery that passed an older message never delivered.
func TestReorderQueueOvertook(t *testing.T) {
	inOrder := asynceventtest.NewReorderQueue(asynceventtest.Reorder{})
	order := drain(t, inOrder, 50, 3)
	for i, body := range order {
		if body != strconv.Itoa(i) {
			t.Fatalf("zero Reorder delivered %v, want send order", order)
		}
	}
	if c := inOrder.Counts(); c.Overtook != 0 || c.Delivered != 50 {
		t.Fatalf("in order: %+v, want 50 delivered, 0 overtook", c)
	}

	shuffled := asynceventtest.NewReorderQueue(asynceventtest.Reorder{Seed: 1, Window: 16})
	order = drain(t, shuffled, 50, 1)
	want := 0 // one message per receive: a delivery overtakes when an older one is still waiting
	seen := map[string]bool{}
	for _, body := range order {
		i, _ := strconv.Atoi(body)
		for j := range i {
			if !seen[strconv.Itoa(j)] {
				want++
				break
			}
		}
		seen[body] = true
	}
	if c := shuffled.Counts(); want == 0 || c.Overtook != want {
		t.Fatalf("shuffled within 16, delivered %v: %+v, want Overtook %d (> 0)", order, c, want)
	}
}
