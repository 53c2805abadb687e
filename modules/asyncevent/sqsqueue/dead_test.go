package sqsqueue_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
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

// The worker's tag is the message attribute deadClass (a request's
// failureClass is another thing), and a message tagged by an older worker
// with failureClass still reads as its class.
func TestDeadClassAttribute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	q := open(t)
	if err := q.Send(ctx, `{"n":1}`); err != nil {
		t.Fatal(err)
	}
	ms, err := q.Receive(ctx, 10, time.Second, time.Minute)
	if err != nil || len(ms) != 1 {
		t.Fatalf("receive %d %v", len(ms), err)
	}
	if err := q.SendDead(ctx, ms[0], asyncevent.DeadTimeout, "TIMEOUT"); err != nil {
		t.Fatal(err)
	}
	cfg, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := awsclient.SQS(cfg)
	// An older worker's tag.
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.DLQURL()), MessageBody: aws.String(`{"n":2}`),
		MessageAttributes: map[string]types.MessageAttributeValue{
			sqsqueue.AttrLegacyDeadClass: {DataType: aws.String("String"), StringValue: aws.String(string(asyncevent.DeadThrottled))},
		}}); err != nil {
		t.Fatal(err)
	}
	got := map[asyncevent.DeadClass]int{}
	deadline := time.Now().Add(10 * time.Second)
	for got[asyncevent.DeadTimeout] != 1 || got[asyncevent.DeadThrottled] != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("dead letters by class %v, want one TIMEOUT and one THROTTLED (the legacy tag)", got)
		}
		ds, err := q.PeekDead(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		clear(got)
		for _, d := range ds {
			got[d.Class]++
		}
	}
	// The worker's own tag, as SQS holds it (PeekDead released both).
	var tagged *types.Message
	for tagged == nil && time.Now().Before(deadline) {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.DLQURL()), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range out.Messages {
			if aws.ToString(m.Body) == `{"n":1}` {
				tagged = &out.Messages[i]
			}
		}
	}
	if tagged == nil {
		t.Fatal("the worker's dead letter is not in the DLQ")
	}
	attrs := tagged.MessageAttributes
	if got := aws.ToString(attrs[sqsqueue.AttrDeadClass].StringValue); got != string(asyncevent.DeadTimeout) {
		t.Fatalf("attributes %v: deadClass %q, want TIMEOUT", attrs, got)
	}
	if _, ok := attrs["failureClass"]; ok {
		t.Fatalf("attributes %v: the dead letter still carries failureClass", attrs)
	}
}
