package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// ingestRun is what one raw ingest loop did.
type ingestRun struct {
	n     int64         // ingests that answered (a failed QUEUED write included, as the product's 202)
	took  time.Duration // from the start to the last one's end
	errs  int64         // failed calls (a failed QUEUED write included)
	first error
	tx    latencies // TransactWriteItems latencies
	send  latencies // SendMessage latencies
	op    latencies // whole ingests, from the first call to the answer
}

// ingest runs total plain ingests from conc goroutines (a closed model,
// like a run's) for event, sending their messages to queueURL: per
// ingest, what Participate calls, in its order (a 3-put transaction, a
// send, a 2-item transaction). idTag keeps the request ids of different
// loops apart. answered, if not nil, is called with each request whose
// ingest answered (the product's 202).
func (s *standins) ingest(ctx context.Context, queueURL, event, idTag string, conc, total int, answered func(rawReq)) *ingestRun {
	in := &ingestRun{}
	var queuedErrs errCount
	n, took, errs, first := loop(ctx, conc, total, func(_, i int) error {
		rq := rawReq{id: fmt.Sprintf("RAW%s%s%07d", s.tag, idTag, i), event: event, user: fmt.Sprintf("raw-user-%s-%07d", idTag, i)}
		now := time.Now().UnixMilli()
		s.wrote(rq.lockPK(), "LOCK")
		s.wrote(rq.pk(), "META")
		t0 := time.Now()
		_, err := s.dynamo.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []dtypes.TransactWriteItem{
			{Put: &dtypes.Put{TableName: &s.table, Item: rq.lockItem(now), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			{Put: &dtypes.Put{TableName: &s.table, Item: rq.requestItem(now, s.requestEntity()), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			s.logPut(rq, "", "RECEIVED", now, "received"),
		}})
		if err != nil {
			return err
		}
		in.tx.add(t0)
		t1 := time.Now()
		if _, err := s.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(rawBody(rq, 0))}); err != nil {
			return err
		}
		in.send.add(t1)
		t2 := time.Now()
		// As the product's ingest, a failed QUEUED write still answers
		// 202 (the message is on the queue; the worker stamps queuedAt):
		// it counts as an ingest and as an error.
		err = s.transact(ctx, s.queue(rq, "RECEIVED", "QUEUED", max(time.Now().UnixMilli(), now+1), "", nil, ""))
		in.op.add(t0)
		if answered != nil {
			answered(rq)
		}
		if err != nil {
			queuedErrs.add(err)
			return nil
		}
		in.tx.add(t2)
		return nil
	})
	in.n, in.took, in.errs, in.first = n, took, errs+queuedErrs.n.Load(), first
	if in.first == nil {
		in.first = queuedErrs.first
	}
	return in
}
