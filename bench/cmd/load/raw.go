package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	stypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// RawRates are the stand-ins' raw rates for what one ingest and one worker
// delivery must do, measured by plain AWS SDK loops (no Pacer code) against
// the same DynamoDB Local and local SQS the stack uses, in the same run, at
// the same concurrency. They are the "limit" the ratios compare against.
type RawRates struct {
	// Concurrency is the ingest loop's goroutines (the run's users).
	Concurrency int     `json:"concurrency"`
	IngestS     float64 `json:"ingestSeconds"`
	// IngestRPS is plain ingests per second: one ingest is what
	// asyncevent.Participate calls for a new request: a TransactWriteItems
	// of 3 puts (lock, request, status log), a SendMessage, and a
	// TransactWriteItems of a conditional update and a put (RECEIVED →
	// QUEUED with its log).
	IngestRPS float64 `json:"ingestRps"`
	TxP50Ms   float64 `json:"txP50Ms"` // TransactWriteItems latency in the ingest loop
	TxP95Ms   float64 `json:"txP95Ms"`
	SendP95Ms float64 `json:"sendP95Ms"` // SendMessage latency in the ingest loop

	// WorkerConcurrency is the worker loop's goroutines: the worker's
	// configured concurrency (pacer_worker_concurrency) when known.
	WorkerConcurrency int     `json:"workerConcurrency"`
	WorkerS           float64 `json:"workerSeconds"`
	// WorkerRPS is plain deliveries per second: each goroutine receives up
	// to 10 messages, and per message runs the two transactions of a
	// FIRST_COME delivery (QUEUED → PROCESSING: update + log put; then
	// PROCESSING → SUCCEEDED with the seat: update + log put + the shared
	// capacity item's conditional decrement), then deletes the batch.
	WorkerRPS float64 `json:"workerRps"`

	Errors int    `json:"errors"`
	Error  string `json:"firstError,omitempty"`
}

// standins are clients of the stack's stand-ins, with a scratch table and
// queue of their own.
type standins struct {
	dynamo *dynamodb.Client
	sqs    *sqs.Client
	table  string
	tag    string
}

// stackEndpoints asks make run's health endpoint (GET /healthz) where the
// stand-ins are.
func stackEndpoints(ctx context.Context, devURL string) (dynamo, queue string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, devURL+"/healthz", nil)
	if err != nil {
		return "", "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	var h struct {
		DynamoDB string `json:"dynamodb"`
		SQS      string `json:"sqs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return "", "", err
	}
	if h.DynamoDB == "" || h.SQS == "" {
		return "", "", fmt.Errorf("%s/healthz names no DynamoDB or SQS endpoint", devURL)
	}
	return h.DynamoDB, h.SQS, nil
}

// newStandins connects to the stand-ins with the stack's fake credentials
// (sdk/standin) and creates the scratch table.
func newStandins(ctx context.Context, dynamoURL, sqsURL, tag string) (*standins, error) {
	// The stand-ins are on loopback: the SDK's standard retries, without
	// its client-side retry quota, which DynamoDB Local's lock-timeout
	// bursts drain (as the product's loopback clients, sdk/awsclient).
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = ratelimit.None })
		}}
	s := &standins{
		dynamo: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(dynamoURL) }),
		sqs:    sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(sqsURL) }),
		table:  "pacer-load-raw-" + tag,
		tag:    tag,
	}
	_, err := s.dynamo.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(s.table),
		BillingMode: dtypes.BillingModePayPerRequest,
		AttributeDefinitions: []dtypes.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: dtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: dtypes.ScalarAttributeTypeS},
		},
		KeySchema: []dtypes.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: dtypes.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: dtypes.KeyTypeRange},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("raw rates: create the scratch table: %w", err)
	}
	return s, nil
}

// Close deletes the scratch table.
func (s *standins) Close(ctx context.Context) {
	_, _ = s.dynamo.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(s.table)}) // best effort: scratch
}

func str(v string) dtypes.AttributeValue { return &dtypes.AttributeValueMemberS{Value: v} }
func num(v int64) dtypes.AttributeValue {
	return &dtypes.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// requestItem is a request-sized item (the attributes ingest writes).
func requestItem(id string, now int64) map[string]dtypes.AttributeValue {
	return map[string]dtypes.AttributeValue{
		"PK": str("REQ#" + id), "SK": str("REQ"), "entityType": str("REQUEST"),
		"requestId": str(id), "eventId": str("raw-event"), "userId": str("raw-user-" + id),
		"eventType": str("FIRST_COME"), "status": str("RECEIVED"), "uiResult": str("PENDING"),
		"requestedAt": num(now), "ttl": num(now/1000 + 86400*30), "idempotencyKey": str("raw-event#raw-user-" + id),
	}
}

func logItem(id, status string, now int64) map[string]dtypes.AttributeValue {
	return map[string]dtypes.AttributeValue{
		"PK": str("REQ#" + id), "SK": str(fmt.Sprintf("LOG#%013d#%s", now, status)), "entityType": str("STATUS_LOG"),
		"requestId": str(id), "toStatus": str(status), "occurredAt": num(now), "message": str("raw"), "ttl": num(now/1000 + 86400*30),
	}
}

// loop runs f total times from conc goroutines (a closed model, like a
// run's) and returns the calls that succeeded and the time from start to
// the last one's end. f returns false when there is nothing more to do.
func loop(ctx context.Context, conc, total int, f func(g, i int) (bool, error)) (n int64, took time.Duration, errs int64, first error) {
	start := time.Now()
	var next, done, failed atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for g := range conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1)
				if i > int64(total) {
					return
				}
				more, err := f(g, int(i))
				if err != nil {
					failed.Add(1)
					once.Do(func() { first = err })
				} else {
					done.Add(1)
				}
				if !more {
					return
				}
			}
		})
	}
	wg.Wait()
	return done.Load(), time.Since(start), failed.Load(), first
}

// latencies collects call latencies from many goroutines.
type latencies struct {
	mu sync.Mutex
	ms []float64
}

func (l *latencies) add(since time.Time) {
	v := float64(time.Since(since).Microseconds()) / 1000
	l.mu.Lock()
	l.ms = append(l.ms, v)
	l.mu.Unlock()
}

func (l *latencies) pct(q float64) float64 {
	sort.Float64s(l.ms)
	return pct(l.ms, q)
}

// measure runs the ingest loop (total ingests from conc goroutines, like
// the run) and then the worker loop (workerConc goroutines delivering the
// total messages the ingests sent).
func (s *standins) measure(ctx context.Context, name string, conc, workerConc, total int) (*RawRates, error) {
	r := &RawRates{Concurrency: conc, WorkerConcurrency: workerConc}
	q, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("pacer-load-raw-" + s.tag + "-" + name)})
	if err != nil {
		return nil, fmt.Errorf("raw rates: create the scratch queue: %w", err)
	}
	defer s.sqs.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) //nolint:errcheck // scratch
	body := aws.String(`{"requestId":"01JRAWRAWRAWRAWRAWRAWRAWRA","eventId":"raw-event","userId":"raw-user-000000","eventType":"FIRST_COME"}`)

	// Ingest: 2 transactions and 1 send, in Participate's order.
	var tx, send latencies
	n, took, errs, first := loop(ctx, conc, total, func(g, i int) (bool, error) {
		id := fmt.Sprintf("%s-%s-i-%d-%d", s.tag, name, g, i)
		now := time.Now().UnixMilli()
		t0 := time.Now()
		_, err := s.dynamo.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []dtypes.TransactWriteItem{
			{Put: &dtypes.Put{TableName: &s.table, Item: map[string]dtypes.AttributeValue{
				"PK": str("LOCK#raw-event#" + id), "SK": str("LOCK"), "requestId": str(id), "createdAt": num(now)},
				ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			{Put: &dtypes.Put{TableName: &s.table, Item: requestItem(id, now), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			{Put: &dtypes.Put{TableName: &s.table, Item: logItem(id, "RECEIVED", now), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		}})
		if err != nil {
			return true, err
		}
		tx.add(t0)
		t1 := time.Now()
		if _, err := s.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: body}); err != nil {
			return true, err
		}
		send.add(t1)
		t2 := time.Now()
		_, err = s.dynamo.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []dtypes.TransactWriteItem{
			{Update: &dtypes.Update{TableName: &s.table, Key: map[string]dtypes.AttributeValue{"PK": str("REQ#" + id), "SK": str("REQ")},
				UpdateExpression:          aws.String("SET #s = :q, queuedAt = :t"),
				ConditionExpression:       aws.String("#s = :r"),
				ExpressionAttributeNames:  map[string]string{"#s": "status"},
				ExpressionAttributeValues: map[string]dtypes.AttributeValue{":q": str("QUEUED"), ":r": str("RECEIVED"), ":t": num(now + 1)}}},
			{Put: &dtypes.Put{TableName: &s.table, Item: logItem(id, "QUEUED", now+1), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		}})
		if err != nil {
			return true, err
		}
		tx.add(t2)
		return true, nil
	})
	r.IngestS, r.IngestRPS = took.Seconds(), float64(n)/max(took.Seconds(), 1e-9)
	r.TxP50Ms, r.TxP95Ms, r.SendP95Ms = tx.pct(.5), tx.pct(.95), send.pct(.95)
	r.Errors += int(errs)
	if first != nil {
		r.Error = first.Error()
	}

	// Worker: the queue now holds the n messages the ingests sent.
	capKey := map[string]dtypes.AttributeValue{"PK": str("EVENT#raw-" + name), "SK": str("CAPACITY")}
	if _, err := s.dynamo.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: map[string]dtypes.AttributeValue{
		"PK": capKey["PK"], "SK": capKey["SK"], "capacityTotal": num(1 << 40), "capacityRemaining": num(1 << 40)}}); err != nil {
		return nil, fmt.Errorf("raw rates: capacity item: %w", err)
	}
	var delivered atomic.Int64
	_, took, errs, first = loop(ctx, workerConc, int(n), func(g, i int) (bool, error) {
		if delivered.Load() >= n {
			return false, nil
		}
		out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 60})
		if err != nil {
			return true, err
		}
		if len(out.Messages) == 0 {
			return delivered.Load() < n, nil // the rest are in flight elsewhere
		}
		var dels []stypes.DeleteMessageBatchRequestEntry
		for j, m := range out.Messages {
			id := fmt.Sprintf("%s-%s-w-%d-%d-%d", s.tag, name, g, i, j)
			now := time.Now().UnixMilli()
			reqKey := map[string]dtypes.AttributeValue{"PK": str("REQ#" + id), "SK": str("REQ")}
			_, err := s.dynamo.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []dtypes.TransactWriteItem{
				{Update: &dtypes.Update{TableName: &s.table, Key: reqKey,
					UpdateExpression:          aws.String("SET #s = :p, startedAt = :t"),
					ConditionExpression:       aws.String("attribute_not_exists(#s) OR #s = :q"),
					ExpressionAttributeNames:  map[string]string{"#s": "status"},
					ExpressionAttributeValues: map[string]dtypes.AttributeValue{":p": str("PROCESSING"), ":q": str("QUEUED"), ":t": num(now)}}},
				{Put: &dtypes.Put{TableName: &s.table, Item: logItem(id, "PROCESSING", now), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			}})
			if err != nil {
				return true, err
			}
			decide := &dynamodb.TransactWriteItemsInput{TransactItems: []dtypes.TransactWriteItem{
				{Update: &dtypes.Update{TableName: &s.table, Key: reqKey,
					UpdateExpression:          aws.String("SET #s = :d, finishedAt = :t, resultCode = :c"),
					ConditionExpression:       aws.String("#s = :p"),
					ExpressionAttributeNames:  map[string]string{"#s": "status"},
					ExpressionAttributeValues: map[string]dtypes.AttributeValue{":d": str("SUCCEEDED"), ":p": str("PROCESSING"), ":t": num(now + 1), ":c": str("SUCCESS")}}},
				{Put: &dtypes.Put{TableName: &s.table, Item: logItem(id, "SUCCEEDED", now+1), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
				{Update: &dtypes.Update{TableName: &s.table, Key: capKey,
					UpdateExpression:          aws.String("SET capacityRemaining = capacityRemaining - :one, updatedAt = :t"),
					ConditionExpression:       aws.String("capacityRemaining > :zero"),
					ExpressionAttributeValues: map[string]dtypes.AttributeValue{":one": num(1), ":zero": num(0), ":t": num(now + 1)}}},
			}}
			// A conflict on the shared capacity item: the real worker
			// leaves the message for redelivery; this loop tries again.
			for try := 0; try < 5; try++ {
				if _, err = s.dynamo.TransactWriteItems(ctx, decide); err == nil {
					break
				}
			}
			if err != nil {
				return true, err
			}
			delivered.Add(1)
			dels = append(dels, stypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(dels) > 0 {
			if _, err := s.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: q.QueueUrl, Entries: dels}); err != nil {
				return true, err
			}
		}
		return true, nil
	})
	r.WorkerS, r.WorkerRPS = took.Seconds(), float64(delivered.Load())/max(took.Seconds(), 1e-9)
	r.Errors += int(errs)
	if first != nil && r.Error == "" {
		r.Error = first.Error()
	}
	return r, nil
}
