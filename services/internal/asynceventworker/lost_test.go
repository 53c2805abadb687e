package asynceventworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
)

// A worker that vanishes on a message's last processing receive leaves no
// failure on the request; SQS would move the message to the DLQ unseen by
// the analytics. The receive SQS still allows after it records the loss
// (WORKER_LOST, a dead-lettered RequestFailed) and lets SQS move the
// message, so the DLQ count and the analytics agree. A request whose
// worker decided it and vanished before the delete is acked instead.
func TestLostLastReceiveIsCounted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const maxReceives = 3
	env := asynceventtest.New(t, asynceventtest.Options{MaxReceives: maxReceives})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 5,
		Ordering: asyncevent.OrderDelivery, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	lost, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	decided, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: "decided"})
	if err != nil {
		t.Fatal(err)
	}

	// Workers that vanish: each processing receive of both messages is
	// taken and never deleted. The one holding "decided" decides it first.
	// A message at its last processing receive is parked (hidden) until
	// the other catches up, then both are released.
	last := asyncevent.DeadLetterReceive(maxReceives)
	receives := map[string]int{}
	parked := map[string]string{} // request id → receipt handle
	hide := func(handle string, secs int32) {
		if out, err := env.SQS.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(env.Queue.URL()),
			Entries: []sqstypes.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("0"), ReceiptHandle: aws.String(handle), VisibilityTimeout: secs}}}); err != nil || len(out.Failed) > 0 {
			t.Fatalf("visibility %d s: %v %+v", secs, err, out)
		}
	}
	for receives[lost.RequestID] < last || receives[decided.RequestID] < last {
		out, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(env.Queue.URL()),
			MaxNumberOfMessages: 10, VisibilityTimeout: 2, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			msg, err := asyncevent.DecodeMessage(aws.ToString(m.Body))
			if err != nil {
				t.Fatal(err)
			}
			receives[msg.RequestID]++
			if receives[msg.RequestID] == last {
				parked[msg.RequestID] = aws.ToString(m.ReceiptHandle)
				hide(parked[msg.RequestID], 60)
			}
			if msg.RequestID == decided.RequestID && receives[msg.RequestID] == 1 {
				if o := env.Worker.Process(ctx, asyncevent.Delivery{Body: aws.ToString(m.Body), ReceiveCount: 1}); !o.Ack {
					t.Fatalf("deciding %s: %+v", decided.RequestID, o)
				}
			}
		}
		if receives[lost.RequestID] > last || receives[decided.RequestID] > last {
			t.Fatalf("receives %v: more than the %d processing receives", receives, last)
		}
	}
	for _, h := range parked {
		hide(h, 0)
	}
	before := env.Request(t, lost.RequestID)

	// A live worker now gets both messages on the receive after.
	w := asyncevent.NewWorker(asyncevent.WorkerConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue, WorkerID: "w2",
		Allocator: asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: env.Store, WorkerID: "w2"})})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = consumer.Run(wctx, env.Queue, asynceventworker.Handler(w, slog.New(slog.DiscardHandler), nil, env.Queue),
			consumer.Config{Concurrency: 2, Visibility: 30 * time.Second, Wait: time.Second})
	}()
	t.Cleanup(func() { stop(); <-done })
	asynceventtest.Eventually(t, 30*time.Second, "the lost message in the DLQ and the main queue empty", func() (bool, error) {
		main, dead, err := env.Queue.Depths(ctx)
		return main == 0 && dead == 1, fmt.Errorf("main %d dlq %d, err %v", main, dead, err)
	})

	after := env.Request(t, lost.RequestID)
	if after.LastErrorCode != asyncevent.CodeWorkerLost || after.Attempts != maxReceives || after.WorkerID != "w2" || after.Status.Terminal() {
		t.Fatalf("lost request: status %s attempts %d lastErrorCode %q worker %q; want undecided, %d, %q, w2",
			after.Status, after.Attempts, after.LastErrorCode, after.WorkerID, maxReceives, asyncevent.CodeWorkerLost)
	}
	evs, err := analytics.Mapper{MaxReceives: maxReceives}.Events(before, after)
	if err != nil {
		t.Fatal(err)
	}
	counted := 0
	for _, ev := range evs {
		var d analytics.Detail
		if err := json.Unmarshal(ev.Detail, &d); err != nil {
			t.Fatal(err)
		}
		if d.EventKind == analytics.RequestFailed && d.DeadLettered && d.ErrorCode == asyncevent.CodeWorkerLost {
			counted++
		}
	}
	if counted != 1 {
		t.Fatalf("events of the loss %+v: want one dead-lettered RequestFailed with %s", evs, asyncevent.CodeWorkerLost)
	}
	if r := env.Request(t, decided.RequestID); r.Status != asyncevent.StatusSucceeded || r.LastErrorCode != "" {
		t.Fatalf("decided request: %s lastErrorCode %q; want SUCCEEDED and no loss recorded", r.Status, r.LastErrorCode)
	}
	view, err := env.Admin.DeadLetters(ctx, 10)
	if err != nil || len(view.Messages) != 1 || view.Messages[0].Message == nil || view.Messages[0].Message.RequestID != lost.RequestID {
		t.Fatalf("DLQ view %+v %v: want the lost request's message alone", view, err)
	}
}
