package sqsqueue

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Counts are one queue's approximate message counts, as SQS reports them.
type Counts struct {
	Visible  int // ApproximateNumberOfMessages
	InFlight int // ApproximateNumberOfMessagesNotVisible
	Delayed  int // ApproximateNumberOfMessagesDelayed
}

// Counts returns the main queue's and the DLQ's counts: one
// GetQueueAttributes call per queue.
func (q *Queue) Counts(ctx context.Context) (main, dlq Counts, err error) {
	if main, err = q.counts(ctx, q.url); err != nil {
		return main, dlq, err
	}
	dlq, err = q.counts(ctx, q.dlqURL)
	return main, dlq, err
}

// MainCounts returns the main queue's counts alone: one
// GetQueueAttributes call.
func (q *Queue) MainCounts(ctx context.Context) (Counts, error) { return q.counts(ctx, q.url) }

func (q *Queue) counts(ctx context.Context, url string) (Counts, error) {
	names := []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	}
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: names})
	if err != nil {
		return Counts{}, fmt.Errorf("sqsqueue: counts of %s: %w", url, err)
	}
	var v [3]int
	for i, name := range names {
		if v[i], err = strconv.Atoi(out.Attributes[string(name)]); err != nil {
			return Counts{}, fmt.Errorf("sqsqueue: counts of %s: %s is %q", url, name, out.Attributes[string(name)])
		}
	}
	return Counts{Visible: v[0], InFlight: v[1], Delayed: v[2]}, nil
}
