package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// The message attributes of a dead letter a worker sent (SendDead).
const (
	// AttrDeadClass is the asyncevent.DeadClass. (It is not a request's
	// failureClass, which says what an operator can do about a failed
	// request; a DLQ message is always a retryable failure.)
	AttrDeadClass = "deadClass"
	// AttrLegacyDeadClass is the name workers before AttrDeadClass tagged
	// the class with; a message tagged so still reads as its class.
	AttrLegacyDeadClass = "failureClass"
	// AttrErrorCode is the last attempt's error code
	// (asyncevent.ErrorCode, e.g. ThrottlingException).
	AttrErrorCode = "errorCode"
	// AttrSourceMessageID is the main queue's message id.
	AttrSourceMessageID = "sourceMessageId"
	// AttrReceiveCount is the receive count of the last delivery.
	AttrReceiveCount = "receiveCount"
)

// deadHold is how long a scan keeps the DLQ messages it received hidden
// (it releases them, or deletes the moved ones, when it is done).
const deadHold = 60 * time.Second

// SendDead sends a main-queue message to the DLQ, unchanged but tagged
// with its failure class and last error code (message attributes). The
// caller then deletes it from the main queue (the worker acks it).
//
// If that delete fails or the worker dies before it, the message comes
// back and its next receive makes SQS move it to the DLQ as well, untagged:
// two copies of one message. Nothing is lost; views and RedriveClass
// collapse the copies (asyncevent.DeadKey) and the tagged one's class
// wins.
func (q *Queue) SendDead(ctx context.Context, m consumer.Message, class asyncevent.DeadClass, code string) error {
	str := func(v string) types.MessageAttributeValue {
		return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	attrs := map[string]types.MessageAttributeValue{
		AttrDeadClass:       str(string(class)),
		AttrSourceMessageID: str(m.ID),
		AttrReceiveCount:    {DataType: aws.String("Number"), StringValue: aws.String(strconv.Itoa(m.ReceiveCount))},
	}
	if code != "" {
		attrs[AttrErrorCode] = str(code)
	}
	_, err := q.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.dlqURL), MessageBody: aws.String(m.Body), MessageAttributes: attrs})
	if err != nil {
		return fmt.Errorf("sqsqueue: send to the DLQ: %w", err)
	}
	return nil
}

// PeekDead implements asyncevent.DeadLetters: it receives up to max DLQ
// messages (holding them hidden while it scans, so that each is seen once)
// and then makes them visible again (ChangeMessageVisibilityBatch to 0), so
// they stay available to a redrive. Receiving counts as a receive: the
// DLQ's ApproximateReceiveCount grows with each peek.
func (q *Queue) PeekDead(ctx context.Context, max int) ([]asyncevent.DeadLetter, error) {
	ms, err := q.scanDead(ctx, max)
	if rerr := q.changeDead(ctx, ms, nil); err == nil {
		err = rerr
	}
	if err != nil {
		return nil, err
	}
	out := make([]asyncevent.DeadLetter, len(ms))
	for i, m := range ms {
		out[i] = deadLetter(m)
	}
	return out, nil
}

// RedriveClass implements asyncevent.DeadLetters: it scans up to max DLQ
// messages, sends one message per request of the class back to the main
// queue (SendMessageBatch), then deletes every DLQ copy of the sent ones,
// and makes the rest visible again. A crash between the send and the
// delete leaves the DLQ copies, which come back after the hold: a later
// redrive sends them again, and the worker finds their request decided
// (done-already) — a repeated delivery, never a lost one.
func (q *Queue) RedriveClass(ctx context.Context, class asyncevent.DeadClass, max int) (asyncevent.RedriveResult, error) {
	var res asyncevent.RedriveResult
	ms, err := q.scanDead(ctx, max)
	if err != nil {
		return res, errors.Join(err, q.changeDead(ctx, ms, nil))
	}
	res.More = len(ms) >= max
	// Group the copies by request; the tagged copy's class wins.
	groups := map[string][]types.Message{}
	classOf := map[string]asyncevent.DeadClass{}
	var order []string
	for _, m := range ms {
		k := asyncevent.DeadKey(aws.ToString(m.Body))
		if _, ok := groups[k]; !ok {
			order = append(order, k)
			classOf[k] = asyncevent.DeadUnknown
		}
		groups[k] = append(groups[k], m)
		if c := deadLetter(m).Class; c != asyncevent.DeadUnknown {
			classOf[k] = c
		}
	}
	var send []string // keys to send
	for _, k := range order {
		if classOf[k] == class {
			send = append(send, k)
		}
	}
	sent := map[string]bool{}
	for i := 0; i < len(send); i += 10 {
		chunk := send[i:min(i+10, len(send))]
		entries := make([]types.SendMessageBatchRequestEntry, len(chunk))
		for j, k := range chunk {
			entries[j] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), MessageBody: groups[k][0].Body}
		}
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
		if err != nil {
			break // the rest stay in the DLQ
		}
		for _, ok := range out.Successful {
			j, _ := strconv.Atoi(aws.ToString(ok.Id))
			sent[chunk[j]] = true
		}
	}
	var del, keep []types.Message
	for _, k := range order {
		if !sent[k] {
			keep = append(keep, groups[k]...)
			continue
		}
		res.Moved++
		res.Dropped += len(groups[k]) - 1
		del = append(del, groups[k]...)
	}
	if err := q.changeDead(ctx, keep, del); err != nil {
		return res, err
	}
	if len(sent) < len(send) {
		return res, fmt.Errorf("sqsqueue: redrive %s: sent %d of %d to the main queue", class, len(sent), len(send))
	}
	return res, nil
}

// scanDead receives up to max DLQ messages, each once: it holds them
// hidden for deadHold. It stops at an empty long poll (which, on SQS,
// asks every server).
func (q *Queue) scanDead(ctx context.Context, max int) ([]types.Message, error) {
	var out []types.Message
	for len(out) < max {
		ms, err := q.receiveRaw(ctx, q.dlqURL, min(10, max-len(out)), time.Second, deadHold)
		if err != nil {
			return out, err
		}
		if len(ms) == 0 {
			break
		}
		out = append(out, ms...)
	}
	return out, nil
}

// changeDead makes release visible again and deletes del (batches of 10),
// even if ctx is cancelled: a half-done change would hide messages for the
// hold. It stops at ctx's deadline all the same (the API's: a stalled
// queue must not hold the call past it); what it did not change is
// visible again after the hold.
func (q *Queue) changeDead(ctx context.Context, release, del []types.Message) error {
	detached := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		detached, cancel = context.WithDeadline(detached, d)
		defer cancel()
	}
	ctx = detached
	var errs []error
	for i := 0; i < len(release); i += 10 {
		chunk := release[i:min(i+10, len(release))]
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(chunk))
		for j, m := range chunk {
			entries[j] = types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}
		}
		if _, err := q.client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.dlqURL), Entries: entries}); err != nil {
			errs = append(errs, fmt.Errorf("sqsqueue: release DLQ messages: %w", err))
		}
	}
	for i := 0; i < len(del); i += 10 {
		chunk := del[i:min(i+10, len(del))]
		entries := make([]types.DeleteMessageBatchRequestEntry, len(chunk))
		for j, m := range chunk {
			entries[j] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), ReceiptHandle: m.ReceiptHandle}
		}
		out, err := q.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.dlqURL), Entries: entries})
		if err == nil && len(out.Failed) > 0 {
			err = fmt.Errorf("%d of %d failed (first: %s)", len(out.Failed), len(chunk), aws.ToString(out.Failed[0].Message))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sqsqueue: delete redriven DLQ messages: %w", err))
		}
	}
	return errors.Join(errs...)
}

// deadLetter decodes a received DLQ message and its tag.
func deadLetter(m types.Message) asyncevent.DeadLetter {
	cm := toMessage(m)
	d := asyncevent.DeadLetter{MessageID: cm.ID, Body: cm.Body, ReceiveCount: cm.ReceiveCount, SentAt: cm.SentAt.UnixMilli(), Class: asyncevent.DeadUnknown}
	for _, name := range []string{AttrDeadClass, AttrLegacyDeadClass} {
		if a, ok := m.MessageAttributes[name]; ok {
			if c, err := asyncevent.ParseDeadClass(aws.ToString(a.StringValue)); err == nil {
				d.Class = c
				break
			}
		}
	}
	if a, ok := m.MessageAttributes[AttrErrorCode]; ok {
		d.ErrorCode = aws.ToString(a.StringValue)
	}
	return d
}
