// Package asynceventtest gives AsyncEvent tests their own table, queue and
// DLQ on the local stand-ins (DynamoDB Local and local-aws-sqs), a counted
// and fault-injectable set of clients, the domain's roles wired over them
// (Env.Ingest, Worker, Allocator, Admin, Operations, Query), and in-process
// workers (sdk/consumer running Worker.Process, and an Allocator each).
//
// For fairness and contention it also has an adversarial queue
// (ReorderQueue: shuffled, delayed, duplicated, redelivered), a harness
// running ingest and workers over it (Env.RunAdversarial) with an
// inversion counter (MeasureFairness), and a DynamoDB client that cancels
// conflicting transactions as AWS does and DynamoDB Local does not
// (ConflictDynamo, Options.EnforceConflicts).
//
//	func TestMain(m *testing.M) {
//		standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true})
//	}
//
//	func TestX(t *testing.T) {
//		env := asynceventtest.New(t, asynceventtest.Options{})
//		env.StartWorkers(t, 2, consumer.Config{})
//		...
//	}
//
// A test that cannot reach the stand-ins fails, saying how to start them.
package asynceventtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// Options tune an Env.
type Options struct {
	// MaxReceives is the DLQ's maxReceiveCount (default
	// sqsqueue.DefaultMaxReceives: three processing receives and a last one).
	MaxReceives int
	// The roles' settings. The env builds its roles, and StartWorkers and
	// RunAdversarial their workers', from these configs: every port left
	// nil is the env's store, queue or DLQ (a Worker's Allocator the
	// env's, or the worker's own), every Cache the env's EventCache (a
	// worker's own for StartWorkers' workers), and Now, Lateness and
	// WorkerID below apply to every role whose own are unset.
	Ingest     asyncevent.IngestConfig
	Worker     asyncevent.WorkerConfig
	Allocator  asyncevent.AllocatorConfig
	Admin      asyncevent.AdminConfig
	Operations asyncevent.OperationsConfig
	Query      asyncevent.QueryConfig
	// EventCacheTTL is the TTL of the env's EventCache and of each
	// worker's (0: asyncevent.DefaultEventCacheTTL; negative: none).
	EventCacheTTL time.Duration
	// Lateness, WorkerID and Now are every role's (see the role configs).
	Lateness asyncevent.Lateness
	WorkerID string
	Now      func() time.Time
	// EnforceConflicts puts a ConflictDynamo between the store and
	// DynamoDB Local, so that transactions conflict as on AWS.
	EnforceConflicts bool
	// Stream turns on the table's DynamoDB stream (dynamostore.Schema's
	// NEW_AND_OLD_IMAGES), for tests that read it. It is off by default:
	// DynamoDB Local records every write of a streamed table, which made
	// the module's suite several times slower, and only the analytics
	// publisher's tests read the stream.
	Stream bool
	// ProjectAllIndex creates the table with the first GSI2, projecting ALL
	// (dynamostore.ProjectAllSchema), instead of dynamostore.Schema's narrow one.
	ProjectAllIndex bool
	// Dynamo, when set, wraps the DynamoDB client under the env's fault
	// and conflict wrappers (a capacity.Meter, a LimitsDynamo...); it is
	// given the table's name and schema.
	Dynamo func(c ddb.Client, table string, schema *ddb.Schema) ddb.Client
	// DynamoDBEndpoint and SQSEndpoint, when set, are the stand-ins the
	// env uses instead of the environment's: a test's private ones
	// (sdk/standin), which it may pause.
	DynamoDBEndpoint, SQSEndpoint string
}

// Env is one test's AsyncEvent stack: its table, its queue, and one of
// each role over them, sharing one EventCache as the roles of one process
// do (an event Admin closes stops Ingest at once).
type Env struct {
	DDB   *ddbtest.Env
	Store *dynamostore.Store
	Queue *sqsqueue.Queue
	// The roles, built from Options' configs over Store and Queue.
	// Allocator is Worker's; nothing runs its Run loop (StartWorkers'
	// workers have their own).
	Ingest     *asyncevent.Ingest
	Worker     *asyncevent.Worker
	Allocator  *asyncevent.Allocator
	Admin      *asyncevent.Admin
	Operations *asyncevent.Operations
	Query      *asyncevent.Query
	// Events is the roles' EventCache.
	Events *asyncevent.EventCache
	// Calls counts every DynamoDB and SQS call made through the clients.
	Calls *awsclient.Counter
	// Dynamo and SQS are the fault-injecting wrappers the store and the
	// queue use.
	Dynamo *FaultyDynamo
	SQS    *FaultySQS
	// Conflict enforces DynamoDB's conflict rule under Dynamo when
	// Options.EnforceConflicts is set (nil otherwise).
	Conflict *ConflictDynamo
	// QueueName is the main queue's name (the DLQ is QueueName-dlq).
	QueueName string
	// Schema is the table's schema.
	Schema *ddb.Schema
	opts   Options
}

var seq atomic.Int64
var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// New creates a table, a queue and its DLQ for t.
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_SQS") == "" {
		t.Fatal("asynceventtest: AWS_ENDPOINT_URL_SQS is not set. Start the stand-ins from TestMain with " +
			"standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true}) after `make deps` (tools/standin/install.sh) installed them.")
	}
	schema := dynamostore.Schema
	if opts.ProjectAllIndex {
		schema = dynamostore.ProjectAllSchema
	}
	if !opts.Stream {
		schema.Stream = ""
	}
	d := ddbtest.NewAt(t, opts.DynamoDBEndpoint, &schema)
	e := &Env{DDB: d, Calls: d.Calls, opts: opts, Schema: &schema}
	var client ddb.Client = d.Client
	if opts.Dynamo != nil {
		client = opts.Dynamo(client, d.Table.Name(), &schema)
	}
	e.Dynamo = &FaultyDynamo{Client: client}
	if opts.EnforceConflicts {
		e.Conflict = NewConflictDynamo(client)
		e.Dynamo.Client = e.Conflict
	}
	e.Store = dynamostore.New(ddb.New(e.Dynamo, ddb.Config{CursorKey: []byte("asynceventtest-cursor-key-0123456789")}).Table(d.Table.Name(), &schema))
	e.SQS = &FaultySQS{Client: awsclient.SQS(d.Config, func(o *sqs.Options) {
		if opts.SQSEndpoint != "" {
			o.BaseEndpoint = aws.String(opts.SQSEndpoint)
		}
	})}
	n := unsafeName.ReplaceAllString(t.Name(), "-")
	if len(n) > 50 {
		n = n[len(n)-50:]
	}
	e.QueueName = fmt.Sprintf("%s-%d-%d", n, time.Now().UnixNano()%1e6, seq.Add(1))
	q, err := sqsqueue.Open(context.Background(), e.SQS, sqsqueue.Config{Name: e.QueueName, MaxReceives: opts.MaxReceives, Ensure: true})
	if err != nil {
		t.Fatalf("asynceventtest: queue: %v", err)
	}
	e.Queue = q
	e.Events = asyncevent.NewEventCache(opts.EventCacheTTL)
	e.Ingest = asyncevent.NewIngest(e.IngestConfig(e.Queue, e.Events))
	e.Allocator = asyncevent.NewAllocator(e.AllocatorConfig(e.Store))
	e.Worker = asyncevent.NewWorker(e.WorkerConfig(e.Store, e.Queue, e.Allocator, e.Events))
	e.Admin = asyncevent.NewAdmin(e.AdminConfig())
	e.Operations = asyncevent.NewOperations(e.OperationsConfig())
	e.Query = asyncevent.NewQuery(e.QueryConfig())
	e.Calls.Reset()
	return e
}

// IngestConfig is Options.Ingest with its unset ports and shared settings
// filled in: sending to q, with cache.
func (e *Env) IngestConfig(q asyncevent.Queue, cache *asyncevent.EventCache) asyncevent.IngestConfig {
	c := e.opts.Ingest
	if c.Requests == nil {
		c.Requests = e.Store
	}
	if c.Events == nil {
		c.Events = e.Store
	}
	if c.Queue == nil {
		c.Queue = q
	}
	if c.Cache == nil {
		c.Cache = cache
	}
	e.shared(&c.Lateness, nil, &c.Now)
	return c
}

// WorkerConfig is Options.Worker with its unset ports and shared settings
// filled in: writing to store, continuing messages on q, with alloc and
// cache.
func (e *Env) WorkerConfig(store asyncevent.WorkerStore, q asyncevent.DelayQueue, alloc *asyncevent.Allocator, cache *asyncevent.EventCache) asyncevent.WorkerConfig {
	c := e.opts.Worker
	if c.Requests == nil {
		c.Requests = store
	}
	if c.Events == nil {
		c.Events = e.Store
	}
	if c.Queue == nil {
		c.Queue = q
	}
	if c.Allocator == nil {
		c.Allocator = alloc
	}
	if c.Cache == nil {
		c.Cache = cache
	}
	e.shared(&c.Lateness, &c.WorkerID, &c.Now)
	return c
}

// AllocatorConfig is Options.Allocator with its unset port and shared
// settings filled in: over store.
func (e *Env) AllocatorConfig(store asyncevent.AllocStore) asyncevent.AllocatorConfig {
	c := e.opts.Allocator
	if c.Store == nil {
		c.Store = store
	}
	e.shared(&c.Lateness, &c.WorkerID, &c.Now)
	return c
}

// AdminConfig is Options.Admin with its unset ports and shared settings
// filled in.
func (e *Env) AdminConfig() asyncevent.AdminConfig {
	c := e.opts.Admin
	if c.Events == nil {
		c.Events = e.Store
	}
	if c.Requests == nil {
		c.Requests = e.Store
	}
	if c.Draw == nil {
		c.Draw = e.Store
	}
	if c.DeadLetters == nil {
		c.DeadLetters = e.Queue
	}
	if c.Cache == nil {
		c.Cache = e.Events
	}
	e.shared(&c.Lateness, nil, &c.Now)
	return c
}

// OperationsConfig is Options.Operations with its unset ports and shared
// settings filled in.
func (e *Env) OperationsConfig() asyncevent.OperationsConfig {
	c := e.opts.Operations
	if c.Requests == nil {
		c.Requests = e.Store
	}
	if c.Events == nil {
		c.Events = e.Store
	}
	if c.Capacity == nil {
		c.Capacity = e.Store
	}
	if c.LockJobs == nil {
		c.LockJobs = e.Store
	}
	if c.Queue == nil {
		c.Queue = e.Queue
	}
	if c.Cache == nil {
		c.Cache = e.Events
	}
	e.shared(&c.Lateness, &c.WorkerID, &c.Now)
	return c
}

// QueryConfig is Options.Query with its unset port and shared settings
// filled in.
func (e *Env) QueryConfig() asyncevent.QueryConfig {
	c := e.opts.Query
	if c.Requests == nil {
		c.Requests = e.Store
	}
	if c.Lines == nil {
		c.Lines = e.Store
	}
	if c.Events == nil {
		c.Events = e.Store
	}
	if c.Cache == nil {
		c.Cache = e.Events
	}
	e.shared(&c.Lateness, nil, &c.Now)
	return c
}

// shared sets a role's Lateness, WorkerID (when not nil) and Now from
// Options where the role's own are unset.
func (e *Env) shared(lateness *asyncevent.Lateness, workerID *string, now *func() time.Time) {
	if *lateness == (asyncevent.Lateness{}) {
		*lateness = e.opts.Lateness
	}
	if workerID != nil && *workerID == "" {
		*workerID = e.opts.WorkerID
	}
	if *now == nil {
		*now = e.opts.Now
	}
}

// StartWorkers starts n in-process worker instances, each with its own
// Worker (own caches), Allocator and LineKeeper (their Run loops), built from Options'
// configs and sharing the env's clients. stop stops them
// gracefully and waits; it is also registered as a cleanup.
//
// The visibility timeout (default 3 s) must exceed the long-poll wait
// (default 1 s) by at least a second: local-aws-sqs starts a message's
// visibility timeout when it picks the message during the long poll, not
// when the poll returns, and keeps polling for the whole wait while the
// batch is not full. With a visibility not above the wait, one message comes
// back in the same batch with the next receive count, and two deliveries of
// it run at once (real SQS never does that).
func (e *Env) StartWorkers(t testing.TB, n int, cfg consumer.Config) (stop func()) {
	t.Helper()
	if cfg.Visibility == 0 {
		cfg.Visibility = 3 * time.Second
	}
	if cfg.Wait == 0 {
		cfg.Wait = time.Second
	}
	if cfg.Visibility < cfg.Wait+time.Second {
		t.Fatalf("asynceventtest: visibility %s must be at least the wait %s plus 1 s (see StartWorkers)", cfg.Visibility, cfg.Wait)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		alloc := asyncevent.NewAllocator(e.AllocatorConfig(e.Store))
		cache := asyncevent.NewEventCache(e.opts.EventCacheTTL)
		wc := e.WorkerConfig(e.Store, e.Queue, alloc, cache)
		line := asyncevent.NewLineKeeper(asyncevent.LineKeeperConfig{Store: e.Store, Events: e.Store, Cache: cache, Lateness: wc.Lateness, Now: wc.Now})
		wc.Line = line
		w := asyncevent.NewWorker(wc)
		handle := func(ctx context.Context, m consumer.Message) bool {
			out := w.Process(ctx, asyncevent.Delivery{Body: m.Body, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt})
			if !out.Ack && out.RetryAfter > 0 { // as the worker binary does
				_ = e.Queue.Delay(ctx, m.ReceiptHandle, out.RetryAfter)
			}
			return out.Ack
		}
		wg.Go(func() {
			if err := consumer.Run(ctx, e.Queue, handle, cfg); err != nil {
				t.Errorf("asynceventtest: worker: %v", err)
			}
		})
		wg.Go(func() { alloc.Run(ctx) })
		wg.Go(func() { line.Run(ctx) })
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// Eventually polls cond until it holds or timeout passes, then fails the
// test with what. It polls every 50 ms at first and backs off to every
// 500 ms over a long wait (×1.25 a poll, from the second second on): many
// conds read a whole event from DynamoDB Local, whose one table lock the
// code under test needs too, and a wait of a minute at 50 ms was 1,200
// such reads.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	interval := 50 * time.Millisecond
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(interval)
		if time.Since(start) > time.Second {
			interval = min(interval*5/4, 500*time.Millisecond)
		}
	}
	t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
}

// Strand makes each user's participation in eventID end as an ingest that
// dies between its writes would leave it: RECEIVED, with no message. (The
// send fails, and so does marking the request failed; Participate answers
// ErrUnavailable.) The faults are cleared before it returns.
func (e *Env) Strand(t testing.TB, eventID string, users ...string) {
	t.Helper()
	e.SQS.SetSendFault(Throttle)
	var n atomic.Int64
	e.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error {
		if n.Add(1)%2 == 0 { // each participation's second transaction: marking it FAILED_FINAL
			return Throttle
		}
		return nil
	})
	defer func() {
		e.SQS.SetSendFault(nil)
		e.Dynamo.SetTxFault(nil)
	}()
	for _, u := range users {
		if _, err := e.Ingest.Participate(context.Background(), asyncevent.ParticipateInput{EventID: eventID, UserID: u}); !errors.Is(err, asyncevent.ErrUnavailable) {
			t.Fatalf("asynceventtest: stranding %s's participation: %v, want ErrUnavailable", u, err)
		}
	}
}

// Request reads a request (strongly consistent), failing the test on error.
func (e *Env) Request(t testing.TB, id string) *asyncevent.Request {
	t.Helper()
	r, err := e.Store.GetRequest(context.Background(), id)
	if err != nil {
		t.Fatalf("get request %s: %v", id, err)
	}
	return r
}

// Throttle is the error FaultyDynamo injects: an AWS API error with code
// ThrottlingException.
var Throttle = &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected throttling", Fault: smithy.FaultServer}

// FaultyDynamo wraps the real DynamoDB client. When TxFault is set, every
// TransactWriteItems first asks it; a non-nil error is returned instead of
// making the call. TxDelay delays every TransactWriteItems.
type FaultyDynamo struct {
	ddb.Client
	fault atomic.Pointer[func(*dynamodb.TransactWriteItemsInput) error]
	delay atomic.Int64
	// Conflicts counts transactions DynamoDB cancelled for a
	// TransactionConflict (which ddb.DB.Transact retries), so tests can
	// tell those retries from the writes the logic makes.
	Conflicts atomic.Int64
}

// SetTxFault installs (or, with nil, removes) the transaction fault hook.
func (f *FaultyDynamo) SetTxFault(h func(*dynamodb.TransactWriteItemsInput) error) {
	if h == nil {
		f.fault.Store(nil)
		return
	}
	f.fault.Store(&h)
}

// SetTxDelay delays every TransactWriteItems by d.
func (f *FaultyDynamo) SetTxDelay(d time.Duration) { f.delay.Store(int64(d)) }

// TransactWriteItems calls the hook, then the real client.
func (f *FaultyDynamo) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if h := f.fault.Load(); h != nil {
		if err := (*h)(in); err != nil {
			return nil, err
		}
	}
	if d := time.Duration(f.delay.Load()); d > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	}
	out, err := f.Client.TransactWriteItems(ctx, in, opts...)
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "TransactionConflict" {
				f.Conflicts.Add(1)
				break
			}
		}
	}
	return out, err
}

// FaultySQS wraps the real SQS client; SendFault, when set, fails
// SendMessage.
type FaultySQS struct {
	sqsqueue.Client
	sendFault atomic.Pointer[error]
}

// SetSendFault makes SendMessage fail with err (nil removes the fault).
func (f *FaultySQS) SetSendFault(err error) {
	if err == nil {
		f.sendFault.Store(nil)
		return
	}
	f.sendFault.Store(&err)
}

// SendMessage fails with the fault, else calls the real client.
func (f *FaultySQS) SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if err := f.sendFault.Load(); err != nil {
		return nil, *err
	}
	return f.Client.SendMessage(ctx, in, opts...)
}
