package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	stypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// rawWorker is the raw worker loop of one measure: conc goroutines take
// the queue's total messages to their requests' terminal states (see
// RawRates.WorkerRPS).
type rawWorker struct {
	s     *standins
	queue string
	event string
	total int64
	conc  int

	done atomic.Int64 // requests decided and their last message acked
	errs errCount
	took time.Duration
}

// rawMessage is a raw message body (rawBody).
type rawMessage struct {
	RequestID string `json:"requestId"`
	EventID   string `json:"eventId"`
	UserID    string `json:"userId"`
}

func (m rawMessage) req() rawReq { return rawReq{id: m.RequestID, event: m.EventID, user: m.UserID} }

// run runs handle on every received message from conc goroutines until
// total requests are done (or ctx ends), deleting by batch the messages
// handle says are done with, and sets took.
func (w *rawWorker) run(ctx context.Context, handle func(m rawMessage) (ack bool, err error)) {
	start := time.Now()
	var wg sync.WaitGroup
	for range w.conc {
		wg.Go(func() {
			for ctx.Err() == nil && w.done.Load() < w.total {
				out, err := w.s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &w.queue, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
				if err != nil {
					w.errs.add(err)
					continue
				}
				if len(out.Messages) == 0 {
					time.Sleep(20 * time.Millisecond) // the rest are delayed or in flight elsewhere
					continue
				}
				var dels []stypes.DeleteMessageBatchRequestEntry
				for j, msg := range out.Messages {
					var m rawMessage
					if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &m); err != nil {
						w.errs.add(err)
						continue
					}
					ack, err := handle(m)
					w.errs.add(err)
					if ack {
						dels = append(dels, stypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), ReceiptHandle: msg.ReceiptHandle})
					}
				}
				if len(dels) > 0 {
					_, err := w.s.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &w.queue, Entries: dels})
					w.errs.add(err)
				}
			}
		})
	}
	wg.Wait()
	w.took = time.Since(start)
}

// delivery models the delivery ordering: two transactions per message,
// the second on the shared capacity item (unlimited seats).
func (w *rawWorker) delivery(ctx context.Context) error {
	s := w.s
	capKey := map[string]dtypes.AttributeValue{"PK": str("EVENT#" + w.event), "SK": str("CAPACITY")}
	if _, err := s.dynamo.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: map[string]dtypes.AttributeValue{
		"PK": capKey["PK"], "SK": capKey["SK"], "entityType": str("CAPACITY"), "eventId": str(w.event),
		"capacityTotal": num(1 << 40), "capacityRemaining": num(1 << 40)}}); err != nil {
		return fmt.Errorf("raw rates: capacity item: %w", err)
	}
	w.run(ctx, func(m rawMessage) (bool, error) {
		r := m.req()
		now := time.Now().UnixMilli()
		err := s.transact(ctx, []dtypes.TransactWriteItem{
			s.move(r, "QUEUED", "PROCESSING", now, "startedAt = :at, attempts = :one, workerId = :w", "",
				map[string]dtypes.AttributeValue{":one": num(1), ":w": str("raw-worker")}),
			s.logPut(r, "QUEUED", "PROCESSING", now, ""),
		})
		if err != nil {
			return false, err
		}
		err = s.transact(ctx, []dtypes.TransactWriteItem{
			s.move(r, "PROCESSING", "SUCCEEDED", now+1, "finishedAt = :at, uiResult = :ui, resultCode = :rc", "",
				map[string]dtypes.AttributeValue{":ui": str("SUCCESS"), ":rc": str("SUCCESS")}),
			s.logPut(r, "PROCESSING", "SUCCEEDED", now+1, ""),
			{Update: &dtypes.Update{TableName: &s.table, Key: capKey,
				UpdateExpression:          aws.String("SET capacityRemaining = capacityRemaining - :one, updatedAt = :t"),
				ConditionExpression:       aws.String("capacityRemaining > :zero"),
				ExpressionAttributeValues: map[string]dtypes.AttributeValue{":one": num(1), ":zero": num(0), ":t": num(now + 1)}}},
		})
		if err != nil {
			return false, err
		}
		w.done.Add(1)
		return true, nil
	})
	return nil
}

// transact runs a TransactWriteItems, tried up to 5 times: a conflict (on
// the shared capacity item, or DynamoDB Local's lock) is retried, as the
// product's ddb.DB.Transact retries conflicts (the delivery worker would
// leave the message for redelivery).
func (s *standins) transact(ctx context.Context, items []dtypes.TransactWriteItem) error {
	var err error
	for range 5 {
		if _, err = s.dynamo.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}
