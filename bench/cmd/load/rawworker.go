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

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// allocBatch is the allocator's decisions per transaction (1 + 2 × 49 =
// 99 items, asyncevent.MaxAllocBatch).
const allocBatch = 49

// maxLateness is the product's default Lateness.Max (WriteTimeout +
// ClockSkew + IndexLag, 3.5 s): the raw allocator makes a request still
// QUEUED this long after its queuedAt a candidate itself.
var maxLateness = asyncevent.Lateness{}.Max()

// rawVisibility is the raw receives' visibility timeout: a message whose
// handling failed comes back after it.
const rawVisibility = 10

// rawWorker is the raw worker loop of one measure: conc goroutines take
// the queue's total messages to their requests' terminal states (see
// RawRates.WorkerRPS for what each ordering does).
type rawWorker struct {
	s     *standins
	queue string
	event string
	total int64
	conc  int

	done                       atomic.Int64 // requests decided and their last message acked
	batches, resends, promoted atomic.Int64
	errs                       errCount
	took                       time.Duration
}

// rawMessage is a raw message body (rawBody).
type rawMessage struct {
	RequestID string `json:"requestId"`
	EventID   string `json:"eventId"`
	UserID    string `json:"userId"`
	Copies    int    `json:"copies"`
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
				out, err := w.s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &w.queue, MaxNumberOfMessages: 10, VisibilityTimeout: rawVisibility})
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

// arrival models the arrival ordering: candidates, delayed copies and one
// allocator goroutine deciding allocBatch per transaction, for capacity
// seats.
func (w *rawWorker) arrival(ctx context.Context, capacity int64) error {
	s := w.s
	capKey := map[string]dtypes.AttributeValue{"PK": str("EVENT#" + w.event), "SK": str("CAPACITY")}
	s.wrote("EVENT#"+w.event, "CAPACITY")
	now := time.Now().UnixMilli()
	if _, err := s.dynamo.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: map[string]dtypes.AttributeValue{
		"PK": capKey["PK"], "SK": capKey["SK"], "entityType": str("CAPACITY"), "eventId": str(w.event),
		"capacityTotal": num(capacity), "capacityRemaining": num(capacity), "updatedAt": num(now),
		"allocOwner": str("raw"), "allocLeaseUntil": num(now + 3600_000), "allocFence": num(1)}}); err != nil {
		return fmt.Errorf("raw rates: capacity item: %w", err)
	}
	kick := make(chan struct{}, 1)
	actx, stop := context.WithCancel(ctx)
	var alloc sync.WaitGroup
	alloc.Go(func() { w.allocate(actx, capKey, capacity, kick) })
	// The n-th copy comes back 1, 2, 4, then 8 s later.
	sendCopy := func(m rawMessage) error {
		delay := int32(min(8, 1<<min(m.Copies, 3)))
		_, err := s.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &w.queue, MessageBody: aws.String(rawBody(m.req(), m.Copies+1)), DelaySeconds: delay})
		return err
	}
	w.run(ctx, func(m rawMessage) (bool, error) {
		r := m.req()
		if m.Copies > 0 {
			st, err := w.status(ctx, r)
			if err != nil {
				return false, err
			}
			if st == "SUCCEEDED" || st == "REJECTED" {
				w.done.Add(1)
				return true, nil
			}
			w.resends.Add(1)
			if err := sendCopy(m); err != nil {
				return false, err // comes back after rawVisibility
			}
			return true, nil
		}
		if err := w.candidate(ctx, r, "raw-worker"); err != nil {
			// As the product's worker: a request the allocator made a
			// candidate (or decided) meanwhile is one; one still RECEIVED
			// (its ingest's QUEUED write failed) gets queuedAt now.
			switch st, gerr := w.status(ctx, r); {
			case gerr != nil:
				return false, err
			case st == "PROCESSING" || st == "SUCCEEDED" || st == "REJECTED":
			case st == "RECEIVED":
				if err := w.s.transact(ctx, w.s.queue(r, "RECEIVED", "PROCESSING", time.Now().UnixMilli(), "startedAt = :at, attempts = :one, uiPhase = :ph, workerId = :w",
					map[string]dtypes.AttributeValue{":one": num(1), ":ph": str("ALLOCATING"), ":w": str("raw-worker")}, "waiting for allocation")); err != nil {
					return false, err
				}
			default:
				return false, err
			}
		}
		select {
		case kick <- struct{}{}:
		default:
		}
		if err := sendCopy(m); err != nil {
			return false, err
		}
		return true, nil
	})
	stop()
	alloc.Wait()
	return nil
}

// candidate makes r a candidate: QUEUED → PROCESSING with uiPhase
// ALLOCATING, and its StatusLog.
func (w *rawWorker) candidate(ctx context.Context, r rawReq, by string) error {
	at := time.Now().UnixMilli()
	return w.s.transact(ctx, []dtypes.TransactWriteItem{
		w.s.move(r, "QUEUED", "PROCESSING", at, "startedAt = :at, attempts = :one, uiPhase = :ph, workerId = :w", "",
			map[string]dtypes.AttributeValue{":one": num(1), ":ph": str("ALLOCATING"), ":w": str(by)}),
		w.s.logPut(r, "QUEUED", "PROCESSING", at, "waiting for allocation"),
	})
}

// status reads r's status (GetItem, strongly consistent).
func (w *rawWorker) status(ctx context.Context, r rawReq) (string, error) {
	out, err := w.s.dynamo.GetItem(ctx, &dynamodb.GetItemInput{TableName: &w.s.table, Key: r.key(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", err
	}
	return attrS(out.Item, "status"), nil
}

// allocate is the raw allocator: one goroutine deciding the candidates in
// GSI2 order, allocBatch per transaction, until total are decided. It
// waits for a kick (or 50 ms) when the next request is not a candidate
// yet.
func (w *rawWorker) allocate(ctx context.Context, capKey map[string]dtypes.AttributeValue, remaining int64, kick <-chan struct{}) {
	s := w.s
	var pos map[string]dtypes.AttributeValue // the last decided request's GSI2 key
	prev := ""                               // its requestId
	wait := func() {
		select {
		case <-ctx.Done():
		case <-kick:
		case <-time.After(50 * time.Millisecond):
		}
	}
	for decided := int64(0); decided < w.total && ctx.Err() == nil; {
		page, err := s.dynamo.Query(ctx, &dynamodb.QueryInput{TableName: &s.table, IndexName: aws.String("GSI2"),
			KeyConditionExpression:    aws.String("GSI2PK = :e"),
			ExpressionAttributeValues: map[string]dtypes.AttributeValue{":e": str("EVENT#" + w.event)},
			ExclusiveStartKey:         pos, Limit: aws.Int32(allocBatch)})
		if err != nil {
			w.errs.add(err)
			wait()
			continue
		}
		batch, next, err := w.candidates(ctx, page.Items)
		if err != nil {
			w.errs.add(err)
		}
		if len(batch) == 0 {
			// As the product's allocator, make a request its worker has
			// not made a candidate MaxLateness after its queuedAt one
			// itself (its delivery failed and waits for its visibility
			// timeout).
			if qat, _ := strconv.ParseInt(attrN(next, "queuedAt"), 10, 64); attrS(next, "status") == "QUEUED" && qat > 0 && time.Now().UnixMilli()-qat > maxLateness.Milliseconds() {
				// A refusal (its worker got there meanwhile) is read
				// afresh next round.
				if w.candidate(ctx, rawReq{id: attrS(next, "requestId"), event: w.event, user: attrS(next, "userId")}, "raw-allocator") == nil {
					w.promoted.Add(1)
				}
				continue
			}
			wait()
			continue
		}
		at := time.Now().UnixMilli()
		wins := min(remaining, int64(len(batch)))
		last := batch[len(batch)-1]
		items := w.allocItems(capKey, batch, wins, prev, at)
		if err := s.transact(ctx, items); err != nil {
			w.errs.add(err)
			wait()
			continue
		}
		w.batches.Add(1)
		remaining -= wins
		decided += int64(len(batch))
		prev = attrS(last, "requestId")
		pos = map[string]dtypes.AttributeValue{"PK": last["PK"], "SK": last["SK"], "GSI2PK": last["GSI2PK"], "GSI2SK": last["GSI2SK"]}
	}
}

// allocItems is the transaction deciding batch at time at: the capacity
// item's update, fenced on the previous batch's last request (prev; none
// yet: ""), that takes wins, then each request's move to SUCCEEDED (the
// first wins) or REJECTED, with its log entry.
func (w *rawWorker) allocItems(capKey map[string]dtypes.AttributeValue, batch []map[string]dtypes.AttributeValue, wins int64, prev string, at int64) []dtypes.TransactWriteItem {
	s := w.s
	last := batch[len(batch)-1]
	cond := "allocFence = :f AND capacityRemaining >= :w AND attribute_not_exists(allocRequestId)"
	vals := map[string]dtypes.AttributeValue{":f": num(1), ":w": num(wins), ":qa": last["queuedAt"], ":rid": last["requestId"], ":at": num(at)}
	if prev != "" {
		cond = "allocFence = :f AND capacityRemaining >= :w AND allocRequestId = :prev"
		vals[":prev"] = str(prev)
	}
	items := []dtypes.TransactWriteItem{{Update: &dtypes.Update{TableName: &s.table, Key: capKey,
		UpdateExpression:          aws.String("SET capacityRemaining = capacityRemaining - :w, allocQueuedAt = :qa, allocRequestId = :rid, updatedAt = :at"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeValues: vals}}}
	for i, it := range batch {
		r := rawReq{id: attrS(it, "requestId"), event: w.event, user: attrS(it, "userId")}
		t := at
		if v, ok := it["startedAt"].(*dtypes.AttributeValueMemberN); ok {
			started, _ := strconv.ParseInt(v.Value, 10, 64)
			t = max(t, started+1)
		}
		to, ui, code := "SUCCEEDED", "SUCCESS", "SUCCESS"
		if int64(i) >= wins {
			to, ui, code = "REJECTED", "REJECTED", "REJECTED_CAPACITY"
		}
		items = append(items,
			s.move(r, "PROCESSING", to, t, "finishedAt = :at, uiPhase = :ph, uiResult = :ui, resultCode = :rc, workerId = :w", " AND uiPhase = :req",
				map[string]dtypes.AttributeValue{":ph": str("ALLOCATED"), ":req": str("ALLOCATING"), ":ui": str(ui), ":rc": str(code), ":w": str("raw-allocator")}),
			s.logPut(r, "PROCESSING", to, t, ""))
	}
	return items
}

// candidates reads the requests of a GSI2 page (BatchGetItem, strongly
// consistent) and returns, in the page's order, those before the first
// that is not a candidate (PROCESSING, uiPhase ALLOCATING), and that one
// (nil if none): the allocator decides in arrival order and passes no
// request by.
func (w *rawWorker) candidates(ctx context.Context, entries []map[string]dtypes.AttributeValue) (batch []map[string]dtypes.AttributeValue, next map[string]dtypes.AttributeValue, err error) {
	if len(entries) == 0 {
		return nil, nil, nil
	}
	s := w.s
	keys := make([]map[string]dtypes.AttributeValue, len(entries))
	for i, e := range entries {
		keys[i] = map[string]dtypes.AttributeValue{"PK": e["PK"], "SK": e["SK"]}
	}
	byID := map[string]map[string]dtypes.AttributeValue{}
	req := map[string]dtypes.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for len(req) > 0 && ctx.Err() == nil {
		out, err := s.dynamo.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, nil, err
		}
		for _, it := range out.Responses[s.table] {
			byID[attrS(it, "requestId")] = it
		}
		req = out.UnprocessedKeys
	}
	for _, e := range entries {
		it := byID[attrS(e, "requestId")]
		if it == nil || attrS(it, "status") != "PROCESSING" || attrS(it, "uiPhase") != "ALLOCATING" {
			next = it
			break
		}
		it["GSI2PK"], it["GSI2SK"] = e["GSI2PK"], e["GSI2SK"]
		batch = append(batch, it)
	}
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	return batch, next, nil
}

// attrS is the string attribute name of it ("" if none).
func attrS(it map[string]dtypes.AttributeValue, name string) string {
	if v, ok := it[name].(*dtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// attrN is the number attribute name of it ("" if none).
func attrN(it map[string]dtypes.AttributeValue, name string) string {
	if v, ok := it[name].(*dtypes.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}

// delivery models the delivery ordering: two transactions per message,
// the second on the shared capacity item (unlimited seats).
func (w *rawWorker) delivery(ctx context.Context) error {
	s := w.s
	capKey := map[string]dtypes.AttributeValue{"PK": str("EVENT#" + w.event), "SK": str("CAPACITY")}
	s.wrote("EVENT#"+w.event, "CAPACITY")
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
