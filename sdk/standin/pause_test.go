package standin_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/standin"
)

// A paused stand-in hangs as a stalled dependency does: a call gets no
// answer until its context ends, and what it sent lands once the
// stand-in is resumed (a call given up on may still have its effect).
func TestPauseHangsAStandInUntilResumed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stack, err := standin.Start(ctx, standin.Config{SQS: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	if _, err := stack.Pause(standin.DynamoDB); !errors.Is(err, standin.ErrNotStarted) {
		t.Fatalf("pausing a stand-in the stack did not start: %v, want ErrNotStarted", err)
	}
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), HTTPClient: awsclient.HTTPClient()}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(stack.SQSEndpoint) })
	created, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("paused")})
	if err != nil {
		t.Fatal(err)
	}
	resume, err := stack.Pause(standin.SQS)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	start := time.Now()
	_, err = q.SendMessage(sctx, &sqs.SendMessageInput{QueueUrl: created.QueueUrl, MessageBody: aws.String("sent while paused")})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send to a paused server: %v after %s, want the deadline", err, time.Since(start))
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: created.QueueUrl, WaitTimeSeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || aws.ToString(got.Messages[0].Body) != "sent while paused" {
		t.Fatalf("after the resume the queue holds %d messages, want the one sent while paused", len(got.Messages))
	}
}
