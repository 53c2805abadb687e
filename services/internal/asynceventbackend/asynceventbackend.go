// Package asynceventbackend is what AsyncEvent's services share: the wiring of
// the domain's roles to their DynamoDB table and SQS queues (OpenAPI and
// OpenWorker, which the API and the worker call with the same
// configuration, each building only the roles its process runs), and the
// module's metrics beside the generic kit's: the worker's (WorkerMetrics,
// Outcome), the queue gauge (QueueGauge) and the capacity invariant
// (Invariant).
package asynceventbackend

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// Config says where AsyncEvent's data lives.
type Config struct {
	Table       string // default dynamostore.DefaultTable
	Queue       string // default sqsqueue.DefaultName; its DLQ is <Queue>-dlq
	MaxReceives int    // the DLQ's maxReceiveCount (default sqsqueue.DefaultMaxReceives)
	// Setup creates the table and the queues if they are missing.
	Setup bool

	// AWS is the AWS configuration; nil loads it with awsclient.Load (the
	// standard chain, or the local stand-ins' endpoints when set), as
	// photo-api does.
	AWS *aws.Config
	// DynamoDB and SQS override the clients built from AWS (e.g. to count
	// calls or inject faults).
	DynamoDB ddb.Client
	SQS      sqsqueue.Client

	// DDBObserver sees every DynamoDB call of the store (metrics: consumed
	// capacity); Observer hears the API's Ingest answers (OpenAPI), and
	// Decisions the worker's Allocator decisions (OpenWorker).
	DDBObserver ddb.Observer
	Observer    asyncevent.Observer
	Decisions   asyncevent.DecisionObserver
	// Humans verifies the human check tokens of the API's Ingest (nil: no
	// verifier; see asyncevent.IngestConfig.Humans), and HumanChecks hears
	// their outcomes.
	Humans      asyncevent.HumanVerifier
	HumanChecks asyncevent.HumanCheckObserver
	// EventLimiter applies the events' own budgets in the API's Ingest
	// (nil: not applied; see asyncevent.IngestConfig.Limiter).
	EventLimiter asyncevent.EventLimiter
	// ConsumedCapacity says whether the API and the worker set
	// DDBObserver, which makes every DynamoDB call ask for its consumed
	// capacity; they declare it (metrics.DeclareConsumedCapacity).
	ConsumedCapacity bool
	// EMF ships the metrics CloudWatch alarms read (metrics.EMF): the
	// API's capacity invariant, the worker's outcomes, the publisher's
	// lag. Each binary starts it on its registry.
	EMF metrics.EMF

	CursorKey     []byte        // seals pagination cursors
	EventCacheTTL time.Duration // see asyncevent.NewEventCache (0: its default)
	RequeueAfter  time.Duration // see asyncevent.OperationsConfig (0: its default)
	DrawGrace     time.Duration // see asyncevent.AdminConfig (0: its default)
	// CandidateWaits: see asyncevent.WorkerConfig (0: its default, 10;
	// negative: never continue a waiting candidate's message). The worker
	// declares it.
	CandidateWaits int
	// WorkerID: see asyncevent.WorkerConfig; set by the worker only.
	WorkerID string
	Log      *slog.Logger
}

// Declare declares Table, Queue, MaxReceives, Setup and EMF on s (Setup defaults
// to on for a local, loopback stack).
func (cfg *Config) Declare(s *config.Set) {
	s.String(&cfg.Table, "table", "PACER_ASYNCEVENT_TABLE", dynamostore.DefaultTable, "DynamoDB table")
	s.String(&cfg.Queue, "queue", "PACER_ASYNCEVENT_QUEUE", sqsqueue.DefaultName, "SQS queue; its DLQ is <queue>-dlq")
	s.Int(&cfg.MaxReceives, "max-receives", "PACER_ASYNCEVENT_MAX_RECEIVES", sqsqueue.DefaultMaxReceives, "the DLQ's maxReceiveCount, used when creating the queue")
	s.AutoBool(&cfg.Setup, "setup", "PACER_ASYNCEVENT_SETUP", awsclient.Local, "create the table and queues if missing: true, false, or auto (true when the AWS endpoints are local)")
	metrics.DeclareEMF(s, &cfg.EMF)
}

// LoadAWS sets cfg.AWS with awsclient.Load (the standard chain, or the
// local stand-ins' endpoints when set) when it is nil and a client is still
// to be built from it. OpenAPI and OpenWorker call it; call it first to
// instrument the configuration it loads.
func (cfg *Config) LoadAWS(ctx context.Context) error {
	if cfg.AWS != nil || (cfg.DynamoDB != nil && cfg.SQS != nil) {
		return nil
	}
	c, err := awsclient.Load(ctx)
	if err != nil {
		return err
	}
	cfg.AWS = &c
	return nil
}

// DynamoDBClient is the DynamoDB client cfg's stores use: cfg.DynamoDB, or
// one made from cfg.AWS (LoadAWS first).
func (cfg *Config) DynamoDBClient() ddb.Client {
	if cfg.DynamoDB != nil {
		return cfg.DynamoDB
	}
	return awsclient.DynamoDB(*cfg.AWS)
}

// APIRoles are the roles the API process runs, over one EventCache (an
// event its Admin closes stops its Ingest at once), and the queue.
type APIRoles struct {
	Ingest     *asyncevent.Ingest
	Query      *asyncevent.Query
	Admin      *asyncevent.Admin
	Operations *asyncevent.Operations // the admin sweep and re-queue, the capacity gauge
	Queue      *sqsqueue.Queue
}

// OpenAPI builds the API process's roles over DynamoDB and SQS (see open).
func OpenAPI(ctx context.Context, cfg Config) (*APIRoles, error) {
	store, q, err := open(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	events := asyncevent.NewEventCache(cfg.EventCacheTTL)
	return &APIRoles{
		Ingest: asyncevent.NewIngest(asyncevent.IngestConfig{Requests: store, Events: store, Queue: q, Cache: events,
			Log: cfg.Log, Observer: cfg.Observer, Humans: cfg.Humans, HumanChecks: cfg.HumanChecks, Limiter: cfg.EventLimiter}),
		Query: asyncevent.NewQuery(asyncevent.QueryConfig{Requests: store, Lines: store, Events: store, Cache: events}),
		Admin: asyncevent.NewAdmin(asyncevent.AdminConfig{Events: store, Requests: store, Draw: store, DeadLetters: q, Cache: events,
			DrawGrace: cfg.DrawGrace}),
		Operations: operations(store, q, events, cfg),
		Queue:      q,
	}, nil
}

// WorkerRoles are the roles a worker process runs, over one EventCache,
// and the queue its consumer reads.
type WorkerRoles struct {
	Worker     *asyncevent.Worker
	Allocator  *asyncevent.Allocator  // the Worker's; the process runs its Run loop
	Line       *asyncevent.LineKeeper // the Worker's; the process runs its Run loop
	Operations *asyncevent.Operations // the periodic sweep and lock jobs
	Queue      *sqsqueue.Queue
}

// OpenWorker builds a worker process's roles over DynamoDB and SQS (see
// open).
func OpenWorker(ctx context.Context, cfg Config) (*WorkerRoles, error) {
	store, q, err := open(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	events := asyncevent.NewEventCache(cfg.EventCacheTTL)
	alloc := asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: store, WorkerID: cfg.WorkerID, Log: cfg.Log, Observer: cfg.Decisions})
	line := asyncevent.NewLineKeeper(asyncevent.LineKeeperConfig{Store: store, Events: store, Cache: events, Log: cfg.Log})
	return &WorkerRoles{
		Worker: asyncevent.NewWorker(asyncevent.WorkerConfig{Requests: store, Events: store, Queue: q, Allocator: alloc, Line: line, Cache: events,
			CandidateWaits: cfg.CandidateWaits, WorkerID: cfg.WorkerID, Log: cfg.Log}),
		Allocator:  alloc,
		Line:       line,
		Operations: operations(store, q, events, cfg),
		Queue:      q,
	}, nil
}

// operations is the Operations both processes run.
func operations(store *dynamostore.Store, q *sqsqueue.Queue, events *asyncevent.EventCache, cfg Config) *asyncevent.Operations {
	return asyncevent.NewOperations(asyncevent.OperationsConfig{Requests: store, Events: store, Capacity: store, LockJobs: store, Queue: q,
		Cache: events, RequeueAfter: cfg.RequeueAfter, WorkerID: cfg.WorkerID, Log: cfg.Log})
}

// open opens the store and the queue over DynamoDB and SQS, creating the
// table and queues first when cfg.Setup is set, with cfg's defaults filled
// in.
func open(ctx context.Context, cfg *Config) (*dynamostore.Store, *sqsqueue.Queue, error) {
	if cfg.Table == "" {
		cfg.Table = dynamostore.DefaultTable
	}
	if cfg.Queue == "" {
		cfg.Queue = sqsqueue.DefaultName
	}
	if err := cfg.LoadAWS(ctx); err != nil {
		return nil, nil, err
	}
	dc := cfg.DynamoDBClient()
	sc := cfg.SQS
	if sc == nil {
		sc = awsclient.SQS(*cfg.AWS)
	}
	store := dynamostore.New(ddb.New(dc, ddb.Config{CursorKey: cfg.CursorKey, Observer: cfg.DDBObserver}).Table(cfg.Table, &dynamostore.Schema))
	if cfg.Setup {
		if err := store.Ensure(ctx); err != nil {
			return nil, nil, fmt.Errorf("asynceventbackend: %w", err)
		}
	}
	q, err := sqsqueue.Open(ctx, sc, sqsqueue.Config{Name: cfg.Queue, MaxReceives: cfg.MaxReceives, Ensure: cfg.Setup})
	if err != nil {
		return nil, nil, fmt.Errorf("asynceventbackend: %w", err)
	}
	return store, q, nil
}
