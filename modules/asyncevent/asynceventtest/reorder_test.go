package asynceventtest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// drain sends n messages, then receives and deletes them, batch at a time,
// and returns what each receive delivered.
func drain(t *testing.T, q *asynceventtest.ReorderQueue, n, batch int) [][]int {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := q.Send(ctx, strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	var receives [][]int
	for q.Len() > 0 {
		msgs, err := q.Receive(ctx, batch, time.Second, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		var handles []string
		for _, m := range msgs {
			i, err := strconv.Atoi(m.Body)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, i)
			handles = append(handles, m.ReceiptHandle)
		}
		receives = append(receives, got)
		if err := q.Delete(ctx, handles); err != nil {
			t.Fatal(err)
		}
	}
	return receives
}

// overtakes recounts, from what each receive delivered, the first
// deliveries that passed an older message neither delivered before nor
// in the same receive.
func overtakes(receives [][]int) int {
	n := 0
	seen := map[int]bool{}
	for _, got := range receives {
		now := map[int]bool{}
		for _, i := range got {
			now[i] = true
		}
		for _, i := range got {
			for j := range i {
				if !seen[j] && !now[j] {
					n++
					break
				}
			}
		}
		for _, i := range got {
			seen[i] = true
		}
	}
	return n
}

// In order, a queue counts no overtaking; shuffled, it counts each first
// delivery that passed an older message never delivered, one message per
// receive or several (a message delivered by the same receive as an older
// one does not overtake it).
func TestReorderQueueOvertook(t *testing.T) {
	inOrder := asynceventtest.NewReorderQueue(asynceventtest.Reorder{})
	var order []int
	for _, got := range drain(t, inOrder, 50, 3) {
		order = append(order, got...)
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("zero Reorder delivered %v, want send order", order)
		}
	}
	if c := inOrder.Counts(); c.Overtook != 0 || c.Delivered != 50 {
		t.Fatalf("in order: %+v, want 50 delivered, 0 overtook", c)
	}
	for _, batch := range []int{1, 4} {
		shuffled := asynceventtest.NewReorderQueue(asynceventtest.Reorder{Seed: 1, Window: 16})
		receives := drain(t, shuffled, 50, batch)
		if c, want := shuffled.Counts(), overtakes(receives); want == 0 || c.Overtook != want {
			t.Fatalf("shuffled within 16, %d per receive, delivered %v: %+v, want Overtook %d (> 0)", batch, receives, c, want)
		}
	}
}
