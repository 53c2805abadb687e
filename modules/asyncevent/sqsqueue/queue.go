// Package sqsqueue is the AsyncEvent participation queue on SQS: the main
// queue, its dead-letter queue (RedrivePolicy with a configurable
// maxReceiveCount), send, batch receive with long polling, batch delete,
// depths, a non-consuming DLQ peek and the redrive (StartMessageMoveTask).
//
// Queue implements asyncevent.Queue, asyncevent.DelayQueue,
// asyncevent.DeadLetters and consumer.Source (sdk/consumer).
package sqsqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// DefaultName is the default main queue name; the DLQ is <name>-dlq.
const DefaultName = "asyncevent-participations"

// DefaultMaxReceives is the default RedrivePolicy maxReceiveCount: three
// processing receives and one on which a worker records that the holder of
// the third vanished (asyncevent.DeadLetterReceive).
const DefaultMaxReceives = 4

// Client is the subset of *sqs.Client the queue uses. Wrap it to count
// calls or inject faults.
type Client interface {
	CreateQueue(ctx context.Context, in *sqs.CreateQueueInput, opts ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error)
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, opts ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	SetQueueAttributes(ctx context.Context, in *sqs.SetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.SetQueueAttributesOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	StartMessageMoveTask(ctx context.Context, in *sqs.StartMessageMoveTaskInput, opts ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
}

var _ Client = (*sqs.Client)(nil)

// Config names the queue and, for Ensure, its settings.
type Config struct {
	// Name is the main queue's name (default DefaultName); the DLQ is
	// Name + "-dlq".
	Name string
	// MaxReceives is the RedrivePolicy maxReceiveCount (default
	// DefaultMaxReceives).
	MaxReceives int
	// Visibility is the main queue's default visibility timeout (default
	// 30 s); receivers may pass their own.
	Visibility time.Duration
	// Ensure creates the queues (DLQ first) if they are missing, and sets
	// the RedrivePolicy. Without it the queues must exist.
	Ensure bool
}

// Queue is an opened main queue with its DLQ.
type Queue struct {
	client                   Client
	cfg                      Config
	url, arn, dlqURL, dlqARN string
	// maxReceives is the main queue's RedrivePolicy maxReceiveCount as
	// SQS has it (0: none).
	maxReceives int
}

var (
	_ asyncevent.Queue       = (*Queue)(nil)
	_ asyncevent.DelayQueue  = (*Queue)(nil)
	_ asyncevent.DeadLetters = (*Queue)(nil)
	_ consumer.Source        = (*Queue)(nil)
)

// Open resolves (and with cfg.Ensure creates) the queue and its DLQ.
func Open(ctx context.Context, client Client, cfg Config) (*Queue, error) {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.MaxReceives <= 0 {
		cfg.MaxReceives = DefaultMaxReceives
	}
	if cfg.Visibility <= 0 {
		cfg.Visibility = 30 * time.Second
	}
	q := &Queue{client: client, cfg: cfg}
	var err error
	if q.dlqURL, err = q.resolve(ctx, cfg.Name+"-dlq", map[string]string{"MessageRetentionPeriod": "1209600"}); err != nil {
		return nil, err
	}
	if q.dlqARN, err = q.queueARN(ctx, q.dlqURL); err != nil {
		return nil, err
	}
	policy, _ := json.Marshal(map[string]string{"deadLetterTargetArn": q.dlqARN, "maxReceiveCount": strconv.Itoa(cfg.MaxReceives)})
	attrs := map[string]string{
		"RedrivePolicy":     string(policy),
		"VisibilityTimeout": strconv.Itoa(int(cfg.Visibility / time.Second)),
	}
	if q.url, err = q.resolve(ctx, cfg.Name, attrs); err != nil {
		return nil, err
	}
	if q.arn, err = q.queueARN(ctx, q.url); err != nil {
		return nil, err
	}
	if q.maxReceives, err = q.redriveMax(ctx); err != nil {
		return nil, err
	}
	return q, nil
}

// redriveMax reads the main queue's RedrivePolicy maxReceiveCount.
func (q *Queue) redriveMax(ctx context.Context) (int, error) {
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy},
	})
	if err != nil {
		return 0, fmt.Errorf("sqsqueue: attributes of %s: %w", q.url, err)
	}
	p := out.Attributes[string(types.QueueAttributeNameRedrivePolicy)]
	if p == "" {
		return 0, nil
	}
	var policy struct {
		MaxReceiveCount json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(p), &policy); err != nil {
		return 0, fmt.Errorf("sqsqueue: RedrivePolicy of %s: %w", q.url, err)
	}
	n, err := strconv.Atoi(strings.Trim(string(policy.MaxReceiveCount), `"`))
	if err != nil {
		return 0, fmt.Errorf("sqsqueue: RedrivePolicy of %s: maxReceiveCount %s", q.url, policy.MaxReceiveCount)
	}
	return n, nil
}

// MaxReceives returns the main queue's maxReceiveCount as SQS has it (read
// at Open; 0 if the queue has no RedrivePolicy): the receive after this
// many moves a message to the DLQ.
func (q *Queue) MaxReceives() int { return q.maxReceives }

// resolve returns a queue's URL, creating it (or updating its attributes)
// when ensuring.
func (q *Queue) resolve(ctx context.Context, name string, attrs map[string]string) (string, error) {
	if !q.cfg.Ensure {
		out, err := q.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if err != nil {
			return "", fmt.Errorf("sqsqueue: queue %s: %w (create it, or run with the setup option)", name, err)
		}
		return aws.ToString(out.QueueUrl), nil
	}
	out, err := q.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err == nil {
		return aws.ToString(out.QueueUrl), nil
	}
	var exists *types.QueueNameExists
	if !errors.As(err, &exists) {
		return "", fmt.Errorf("sqsqueue: create queue %s: %w", name, err)
	}
	// It exists with other attributes: bring them in line.
	got, gerr := q.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if gerr != nil {
		return "", fmt.Errorf("sqsqueue: queue %s: %w", name, gerr)
	}
	url := aws.ToString(got.QueueUrl)
	if _, err := q.client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: attrs}); err != nil {
		return "", fmt.Errorf("sqsqueue: set attributes of %s: %w", name, err)
	}
	return url, nil
}

func (q *Queue) queueARN(ctx context.Context, url string) (string, error) {
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", fmt.Errorf("sqsqueue: attributes of %s: %w", url, err)
	}
	return out.Attributes[string(types.QueueAttributeNameQueueArn)], nil
}

// URL returns the main queue's URL.
func (q *Queue) URL() string { return q.url }

// DLQURL returns the dead-letter queue's URL.
func (q *Queue) DLQURL() string { return q.dlqURL }

// Send implements asyncevent.Queue: one SendMessage.
func (q *Queue) Send(ctx context.Context, body string) error {
	return q.SendAfter(ctx, body, 0)
}

// SendAfter implements asyncevent.DelayQueue: one SendMessage with
// DelaySeconds (delay in whole seconds, rounded up, at most
// asyncevent.MaxSendDelay).
func (q *Queue) SendAfter(ctx context.Context, body string, delay time.Duration) error {
	secs := int32((min(max(delay, 0), asyncevent.MaxSendDelay) + time.Second - 1) / time.Second)
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(body), DelaySeconds: secs})
	if err != nil {
		return fmt.Errorf("sqsqueue: send: %w", err)
	}
	return nil
}

// Receive implements consumer.Source on the main queue.
func (q *Queue) Receive(ctx context.Context, n int, wait, visibility time.Duration) ([]consumer.Message, error) {
	return q.receive(ctx, q.url, n, wait, visibility)
}

func (q *Queue) receive(ctx context.Context, url string, n int, wait, visibility time.Duration) ([]consumer.Message, error) {
	out, err := q.receiveRaw(ctx, url, n, wait, visibility)
	if err != nil {
		return nil, err
	}
	msgs := make([]consumer.Message, 0, len(out))
	for _, m := range out {
		msgs = append(msgs, toMessage(m))
	}
	return msgs, nil
}

func (q *Queue) receiveRaw(ctx context.Context, url string, n int, wait, visibility time.Duration) ([]types.Message, error) {
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:            aws.String(url),
		MaxNumberOfMessages: int32(min(max(n, 1), 10)),
		WaitTimeSeconds:     int32(wait / time.Second),
		VisibilityTimeout:   int32(visibility / time.Second),
		// Both fields: local-aws-sqs honours only the deprecated one.
		AttributeNames:              []types.QueueAttributeName{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, fmt.Errorf("sqsqueue: receive: %w", err)
	}
	return out.Messages, nil
}

func toMessage(m types.Message) consumer.Message {
	cm := consumer.Message{ID: aws.ToString(m.MessageId), Body: aws.ToString(m.Body), ReceiptHandle: aws.ToString(m.ReceiptHandle)}
	cm.ReceiveCount, _ = strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); err == nil {
		cm.SentAt = time.UnixMilli(ms)
	}
	return cm
}

// Delete implements consumer.Source: one DeleteMessageBatch of up to 10.
func (q *Queue) Delete(ctx context.Context, handles []string) error {
	if len(handles) == 0 {
		return nil
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(handles))
	for i, h := range handles {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	out, err := q.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
	if err != nil {
		return fmt.Errorf("sqsqueue: delete batch: %w", err)
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("sqsqueue: delete batch: %d of %d failed (first: %s)", len(out.Failed), len(handles), aws.ToString(out.Failed[0].Message))
	}
	return nil
}

// Delay makes a received message visible again after d instead of its
// visibility timeout (ChangeMessageVisibility, in whole seconds, rounded
// up, at most 12 hours), so that its redelivery comes when it is useful.
func (q *Queue) Delay(ctx context.Context, handle string, d time.Duration) error {
	secs := min(int32((d+time.Second-1)/time.Second), 12*3600)
	out, err := q.client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.url),
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("0"), ReceiptHandle: aws.String(handle), VisibilityTimeout: max(secs, 0)}}})
	if err != nil {
		return fmt.Errorf("sqsqueue: delay: %w", err)
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("sqsqueue: delay: %s", aws.ToString(out.Failed[0].Message))
	}
	return nil
}

// Depths implements asyncevent.DeadLetters: the depth (see Depth) of the
// main queue and of the DLQ.
func (q *Queue) Depths(ctx context.Context) (int, int, error) {
	main, err := q.depth(ctx, q.url)
	if err != nil {
		return 0, 0, err
	}
	dead, err := q.depth(ctx, q.dlqURL)
	return main, dead, err
}

// Depth returns the main queue's backlog: ApproximateNumberOfMessages plus
// ApproximateNumberOfMessagesDelayed, the messages waiting to be received.
// Counting delayed messages matters even with DelaySeconds 0: local-aws-sqs
// marks a message it has just accepted as delayed until its next timer tick,
// so ApproximateNumberOfMessages alone can miss a send that already
// returned. (AWS counts visible messages only and calls both figures
// approximate; local-aws-sqs also counts in-flight ones.)
func (q *Queue) Depth(ctx context.Context) (int, error) { return q.depth(ctx, q.url) }

// DeadDepth returns the DLQ's depth, counted as Depth counts it.
func (q *Queue) DeadDepth(ctx context.Context) (int, error) { return q.depth(ctx, q.dlqURL) }

func (q *Queue) depth(ctx context.Context, url string) (int, error) {
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		return 0, fmt.Errorf("sqsqueue: depth of %s: %w", url, err)
	}
	n := 0
	for _, name := range []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	} {
		v, err := strconv.Atoi(out.Attributes[string(name)])
		if err != nil {
			return 0, fmt.Errorf("sqsqueue: depth of %s: %s is %q", url, name, out.Attributes[string(name)])
		}
		n += v
	}
	return n, nil
}

// Redrive implements asyncevent.DeadLetters with StartMessageMoveTask from
// the DLQ back to the main queue. The move runs asynchronously; the
// returned task handle identifies it. SQS runs one move task per queue at a
// time: while one runs, Redrive is asyncevent.ErrRedriveRunning.
func (q *Queue) Redrive(ctx context.Context) (string, error) {
	out, err := q.client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{
		SourceArn: aws.String(q.dlqARN), DestinationArn: aws.String(q.arn),
	})
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "InvalidParameterValue" && strings.Contains(ae.ErrorMessage(), "already") {
		return "", fmt.Errorf("%w: %w", asyncevent.ErrRedriveRunning, err)
	}
	if err != nil {
		return "", fmt.Errorf("sqsqueue: redrive: %w", err)
	}
	return aws.ToString(out.TaskHandle), nil
}
