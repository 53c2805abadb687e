package sqsqueue_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{SQS: true})
}

func open(t *testing.T) *sqsqueue.Queue {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_SQS") == "" {
		t.Fatal("AWS_ENDPOINT_URL_SQS is not set: TestMain starts local-aws-sqs; run `make deps` first")
	}
	cfg, err := awsclient.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqsqueue.Open(context.Background(), awsclient.SQS(cfg), sqsqueue.Config{
		Name: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()), Ensure: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// A send that has returned is in the depth at once: local-aws-sqs holds a
// just-accepted message as "delayed" until its next timer tick, even with
// DelaySeconds 0, so Depth must count delayed messages too.
func TestDepthCountsEverySendAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := open(t)
	for i := 1; i <= 100; i++ {
		if err := q.Send(ctx, fmt.Sprintf(`{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
		if n, err := q.Depth(ctx); err != nil || n != i {
			t.Fatalf("after %d sends: depth %d (%v)", i, n, err)
		}
	}
	if main, dead, err := q.Depths(ctx); err != nil || main != 100 || dead != 0 {
		t.Fatalf("depths %d/%d (%v), want 100/0", main, dead, err)
	}
	ms, err := q.Receive(ctx, 10, 0, time.Minute)
	if err != nil || len(ms) == 0 {
		t.Fatalf("receive: %d %v", len(ms), err)
	}
	handles := make([]string, len(ms))
	for i, m := range ms {
		handles[i] = m.ReceiptHandle
	}
	if err := q.Delete(ctx, handles); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Depth(ctx); err != nil || n != 100-len(ms) {
		t.Fatalf("after deleting %d: depth %d (%v)", len(ms), n, err)
	}
}

// Counts reports each state of the main queue and the DLQ.
func TestCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := open(t)
	for i := range 3 {
		if err := q.Send(ctx, fmt.Sprintf(`{"n":%d}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	main, dlq, err := q.Counts(ctx)
	if err != nil || main.Visible+main.Delayed != 3 || main.InFlight != 0 || dlq != (sqsqueue.Counts{}) {
		t.Fatalf("after 3 sends: main %+v, dlq %+v (%v)", main, dlq, err)
	}
	ms, err := q.Receive(ctx, 1, 0, time.Minute)
	if err != nil || len(ms) != 1 {
		t.Fatalf("receive: %d %v", len(ms), err)
	}
	main, _, err = q.Counts(ctx)
	if err != nil || main.InFlight != 1 {
		t.Fatalf("after receiving 1: main %+v (%v)", main, err)
	}
	t.Logf("after receiving 1 of 3: %+v", main)
}

// Delay brings a received message back after the given time, well before
// its visibility timeout, as the same message on its second receive.
func TestDelay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := open(t)
	if err := q.Send(ctx, `{"n":1}`); err != nil {
		t.Fatal(err)
	}
	first, err := q.Receive(ctx, 1, 5*time.Second, 10*time.Minute)
	if err != nil || len(first) != 1 {
		t.Fatalf("receive: %d %v", len(first), err)
	}
	if err := q.Delay(ctx, first[0].ReceiptHandle, time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // far below the 10 min timeout
	for {
		again, err := q.Receive(ctx, 1, time.Second, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(again) == 1 {
			// The visibility change is not a receive (tools/standin/patch-sqs.mjs).
			if again[0].ID != first[0].ID || again[0].ReceiveCount != 2 {
				t.Fatalf("redelivered %+v, want message %s a second time", again[0], first[0].ID)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the delayed message did not come back within 30 s (its visibility timeout is 10 min)")
		}
	}
}
