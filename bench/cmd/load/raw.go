package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
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

	"github.com/pacerhq/pacer/sdk/awsclient"
)

// RawRates are the stand-ins' raw rates for what one ingest and one worker
// delivery must do, measured by plain AWS SDK loops (no Pacer code) against
// the same DynamoDB Local and local SQS the stack uses, in the same run, on
// a scratch queue and (Table, -raw-table) either the product table itself,
// stream included, on events and users of their own, with the items they
// wrote deleted after each measurement (the default), or a scratch copy of
// it (same keys and GSIs with their projections, no stream: see
// copyTable) made afresh for each measurement and deleted after it.
// rawitems.go writes the product's attributes and index keys. They are the
// "limit" the ratios compare against.
type RawRates struct {
	// Table is where the loops wrote: "product" or "scratch".
	Table string `json:"table"`
	// Concurrency is the ingest loop's goroutines (the run's users).
	Concurrency int     `json:"concurrency"`
	IngestS     float64 `json:"ingestSeconds"`
	// IngestRPS is plain ingests per second: one ingest is what
	// asyncevent.Ingest.Participate calls for a new request: a TransactWriteItems
	// of 3 conditional puts (IdempotencyLock, Request RECEIVED, StatusLog),
	// a SendMessage of the request's message, and a TransactWriteItems of
	// the conditional update RECEIVED → QUEUED (queuedAt and the GSI1/GSI2
	// keys) and its StatusLog put. As in the product, an ingest whose
	// QUEUED write failed after the send counts (and is an error): the
	// worker loop stamps queuedAt.
	IngestRPS float64 `json:"ingestRps"`
	TxP50Ms   float64 `json:"txP50Ms"` // TransactWriteItems latency in the ingest loop
	TxP95Ms   float64 `json:"txP95Ms"`
	TxMeanMs  float64 `json:"txMeanMs"`
	SendP95Ms float64 `json:"sendP95Ms"` // SendMessage latency in the ingest loop

	// Ordering is the FIRST_COME ordering the worker loop models:
	// "arrival" (the default) or "delivery".
	Ordering string `json:"ordering"`
	// WorkerConcurrency is the worker loop's goroutines: the workers'
	// concurrency (pacer_worker_concurrency) times the workers that ran.
	WorkerConcurrency int     `json:"workerConcurrency"`
	WorkerS           float64 `json:"workerSeconds"`
	// WorkerRPS is plain deliveries per second: requests the worker loop
	// took from the queue to a terminal state and acked, from its start
	// to the last ack. The goroutines receive up to 10 messages at a time
	// (each message names a request the ingest loop wrote) and delete
	// what they finished by batch.
	//
	// arrival: a message's first delivery makes its request a candidate
	// (TransactWriteItems: QUEUED → PROCESSING with uiPhase ALLOCATING and
	// startedAt, + StatusLog put), sends a delayed copy (SendMessage,
	// DelaySeconds 1, SQS's granularity) and is acked; one allocator
	// goroutine decides the candidates in (queuedAt, requestId) order, 49
	// per round: a Query of GSI2 from its position (Limit 49), a
	// BatchGetItem of those requests (GSI2 projects keys only), and one
	// TransactWriteItems of 99 items: the capacity item's fenced update
	// (seats, position) + 49 × (PROCESSING → SUCCEEDED or REJECTED, +
	// StatusLog put); the copy's delivery reads the request (GetItem,
	// strongly consistent) and is acked if it is decided, else sent again
	// delayed (Resends; 2, 4, then 8 s). Like the product's, the allocator makes a request
	// still QUEUED MaxLateness (3.5 s) after its queuedAt a candidate
	// itself (Promoted: its worker's transaction failed). The capacity is
	// half the requests, like the run. Receives use a 10 s visibility
	// timeout.
	//
	// delivery: per message, QUEUED → PROCESSING (update + StatusLog
	// put), then PROCESSING → SUCCEEDED with the seat (update + StatusLog
	// put + the shared capacity item's conditional decrement, tried up to
	// 5 times on a conflict); unlimited capacity.
	WorkerRPS float64 `json:"workerRps"`
	// PipelineIngestRPS and PipelineWorkerRPS are the same loops run at
	// once on a queue and event of their own (pipeline): ingests per second
	// while the worker loop drains, and its requests decided per second.
	// PipelinePolls is the reads of the clients' polls (rawPoller) the
	// pipeline made (0: the run does not poll while it ingests).
	PipelineIngestRPS float64 `json:"pipelineIngestRps"`
	PipelineWorkerRPS float64 `json:"pipelineWorkerRps"`
	PipelinePolls     int     `json:"pipelinePolls,omitempty"`
	// PipelineIngestP95Ms is the p95 of the pipeline's whole ingests (3
	// calls, as the product's handler makes them).
	PipelineIngestP95Ms float64 `json:"pipelineIngestP95Ms"`
	AllocBatches        int     `json:"allocBatches,omitempty"` // arrival: the allocator's transactions
	Resends             int     `json:"resends,omitempty"`      // arrival: copies that found their request undecided
	Promoted            int     `json:"promoted,omitempty"`     // arrival: QUEUED requests the allocator made candidates

	Errors int    `json:"errors"`
	Error  string `json:"firstError,omitempty"`
}

// standins are clients of the stack's stand-ins, with a scratch table and
// queue of their own.
type standins struct {
	dynamo  *dynamodb.Client
	sqs     *sqs.Client
	product *dtypes.TableDescription // the product table, which a scratch table copies
	table   string                   // the current measurement's table (see scratch)
	tag     string

	// onProduct: the raw loops write to the product table (rawOnProduct),
	// and written holds the keys they wrote, for clean.
	onProduct bool
	// pollInflight > 0: the pipeline polls its requests as the run's
	// clients do, at most this many reads at once (rawPoller).
	pollInflight int
	mu           sync.Mutex
	written      map[[2]string]struct{}
}

// stack is what make run's health endpoint (GET /healthz) says about the
// stack: where the stand-ins are, the AsyncEvent table's name and where
// the list of its worker processes is (both "" if it does not say).
type stack struct {
	DynamoDB   string            `json:"dynamodb"`
	SQS        string            `json:"sqs"`
	Advertised map[string]string `json:"advertised"`
}

func (s *stack) table() string   { return s.Advertised["asyncevent.table"] }
func (s *stack) workers() string { return s.Advertised["asyncevent.workers"] }

// readStack reads devURL/healthz.
func readStack(ctx context.Context, c *http.Client, devURL string) (*stack, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, devURL+"/healthz", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var h stack
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return nil, fmt.Errorf("%s/healthz: %w", devURL, err)
	}
	return &h, nil
}

// newStandins connects to the stand-ins with the stack's fake credentials
// (sdk/standin) and reads the product table's definition (DescribeTable
// of product), which each measurement's scratch table copies (copyTable).
func newStandins(ctx context.Context, dynamoURL, sqsURL, product, tag string) (*standins, error) {
	// The stand-ins are on loopback: the SDK's standard retries, without
	// its client-side retry quota, which DynamoDB Local's lock-timeout
	// bursts drain (as the product's loopback clients, sdk/awsclient).
	// The product's HTTP client settings (awsclient.HTTPClient: idle
	// connections kept for as many calls as are in flight), so that the
	// raw loops and the product open connections alike.
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient: awsclient.HTTPClient(),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = ratelimit.None })
		}}
	s := &standins{
		dynamo: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(dynamoURL) }),
		sqs:    sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(sqsURL) }),
		tag:    tag,
	}
	d, err := s.dynamo.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(product)})
	if err != nil {
		return nil, fmt.Errorf("raw rates: describe the product table %s: %w", product, err)
	}
	s.product = d.Table
	return s, nil
}

// copyTable is the CreateTable input of a table named name defined as t:
// the same attribute definitions, key schema and GSIs (keys and
// projections), on-demand, and no stream. DynamoDB Local records a
// streamed table's every write, and a second streamed table taking the
// raw loops' writes slowed the stack's next run about 3× (closed-200:
// 17 req/s after raw loops on a streamed copy, 47 without raw loops, on
// the same machine): the raw rates are measured without the stream's
// cost, which on AWS is not on the write path.
func copyTable(t *dtypes.TableDescription, name string) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          dtypes.BillingModePayPerRequest,
		AttributeDefinitions: t.AttributeDefinitions,
		KeySchema:            t.KeySchema,
	}
	for _, g := range t.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, dtypes.GlobalSecondaryIndex{
			IndexName: g.IndexName, KeySchema: g.KeySchema, Projection: g.Projection,
		})
	}
	return in
}

// loop runs f total times from conc goroutines (a closed model, like a
// run's) and returns the calls that succeeded and the time from start to
// the last one's end.
func loop(ctx context.Context, conc, total int, f func(g, i int) error) (n int64, took time.Duration, errs int64, first error) {
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
				if err := f(g, int(i)); err != nil {
					failed.Add(1)
					once.Do(func() { first = err })
				} else {
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return done.Load(), time.Since(start), failed.Load(), first
}

// errCount counts a loop's errors and keeps the first.
type errCount struct {
	n     atomic.Int64
	once  sync.Once
	first error
}

func (e *errCount) add(err error) {
	if err != nil {
		e.n.Add(1)
		e.once.Do(func() { e.first = err })
	}
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

func (l *latencies) mean() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ms) == 0 {
		return 0
	}
	var sum float64
	for _, v := range l.ms {
		sum += v
	}
	return sum / float64(len(l.ms))
}

func (l *latencies) pct(q float64) float64 {
	sort.Float64s(l.ms)
	return pct(l.ms, q)
}

// warm runs the ingest loop once (total ingests from conc goroutines) and
// discards it: a stand-in started just before (DynamoDB Local's JVM) runs
// its first loop at half speed or less (closed-200 raw ingest: 78/s before
// the first run, 179/s after it), which would skew the first ratios.
func (s *standins) warm(ctx context.Context, conc, total int) error {
	drop, err := s.scratch(ctx, "warm")
	if err != nil {
		return err
	}
	defer drop()
	q, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("pacer-load-raw-" + s.tag + "-warm")})
	if err != nil {
		return fmt.Errorf("raw rates: create the warm-up queue: %w", err)
	}
	defer s.sqs.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) //nolint:errcheck // scratch
	if in := s.ingest(ctx, aws.ToString(q.QueueUrl), "raw-"+s.tag+"-warm", "warm", conc, total, nil); in.first != nil && in.n == 0 {
		return fmt.Errorf("raw rates: warm-up: %w", in.first)
	}
	return nil
}

// workerTimeout bounds a raw worker loop (a message whose handling failed
// comes back after rawVisibility).
const workerTimeout = 3 * time.Minute

// measure runs the ingest loop (total ingests from conc goroutines, like
// the run) and then the worker loop of ordering (workerConc goroutines
// delivering the messages the ingests sent, for their requests).
func (s *standins) measure(ctx context.Context, name, ordering string, conc, workerConc, total int) (*RawRates, error) {
	r := &RawRates{Concurrency: conc, WorkerConcurrency: workerConc, Ordering: ordering, Table: rawOnScratch}
	if s.onProduct {
		r.Table = rawOnProduct
	}
	drop, err := s.scratch(ctx, name)
	if err != nil {
		return nil, err
	}
	defer drop()
	q, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("pacer-load-raw-" + s.tag + "-" + name)})
	if err != nil {
		return nil, fmt.Errorf("raw rates: create the scratch queue: %w", err)
	}
	defer s.sqs.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) //nolint:errcheck // scratch
	event := "raw-" + s.tag + "-" + name

	// Ingest: 2 transactions and 1 send, in Participate's order.
	in := s.ingest(ctx, aws.ToString(q.QueueUrl), event, name, conc, total, nil)
	n := in.n
	r.IngestS, r.IngestRPS = in.took.Seconds(), float64(n)/max(in.took.Seconds(), 1e-9)
	r.TxP50Ms, r.TxP95Ms, r.TxMeanMs, r.SendP95Ms = in.tx.pct(.5), in.tx.pct(.95), in.tx.mean(), in.send.pct(.95)
	r.Errors += int(in.errs)
	if in.first != nil {
		r.Error = in.first.Error()
	}

	// Worker: the queue now holds the n messages the ingests sent.
	// It stops after workerTimeout, with what it did by then.
	w := &rawWorker{s: s, queue: aws.ToString(q.QueueUrl), event: event, total: n, conc: workerConc}
	wctx, cancel := context.WithTimeout(ctx, workerTimeout)
	defer cancel()
	switch ordering {
	case "delivery":
		err = w.delivery(wctx)
	default:
		err = w.arrival(wctx, max(1, n/2))
	}
	if err != nil {
		return nil, err
	}
	if d := w.done.Load(); d < n && ctx.Err() == nil {
		w.errs.add(fmt.Errorf("raw rates: the worker loop finished %d of %d requests in %s", d, n, workerTimeout))
	}
	r.WorkerS, r.WorkerRPS = w.took.Seconds(), float64(w.done.Load())/max(w.took.Seconds(), 1e-9)
	r.AllocBatches, r.Resends, r.Promoted = int(w.batches.Load()), int(w.resends.Load()), int(w.promoted.Load())
	r.Errors += int(w.errs.n.Load())
	if w.errs.first != nil && r.Error == "" {
		r.Error = w.errs.first.Error()
	}
	if err := s.pipeline(ctx, name, ordering, conc, workerConc, total, r); err != nil {
		return nil, err
	}
	return r, nil
}
