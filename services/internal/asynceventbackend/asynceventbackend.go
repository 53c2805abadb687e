// Package asynceventbackend is what AsyncEvent's services share: the wiring of
// the domain service to its DynamoDB table and SQS queues (Open, which the
// API and the worker call with the same configuration), and the module's
// metrics beside the generic kit's: the worker's (WorkerMetrics, Outcome),
// the queue gauge (QueueGauge) and the capacity invariant (Invariant).
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
	// capacity); Observer hears the domain service's answers.
	DDBObserver ddb.Observer
	Observer    asyncevent.Observer
	// ConsumedCapacity says whether the API and the worker set
	// DDBObserver, which makes every DynamoDB call ask for its consumed
	// capacity; they declare it (metrics.DeclareConsumedCapacity).
	ConsumedCapacity bool
	// EMF ships the metrics CloudWatch alarms read (EMF): the
	// API's capacity invariant, the worker's outcomes, the publisher's
	// lag. Each binary starts it on its registry.
	EMF EMF

	CursorKey     []byte        // seals pagination cursors
	EventCacheTTL time.Duration // see asyncevent.Config
	RequeueAfter  time.Duration // see asyncevent.Config (0: its default)
	DrawGrace     time.Duration // see asyncevent.Config (0: its default)
	// CandidateWaits: see asyncevent.Config (0: its default, 10; negative:
	// never continue a waiting candidate's message). The worker declares it.
	CandidateWaits int
	WorkerID       string // see asyncevent.Config; set by the worker only
	Log            *slog.Logger
}

// Declare declares Table, Queue, MaxReceives, Setup and EMF on s (Setup defaults
// to on for a local, loopback stack).
func (cfg *Config) Declare(s *config.Set) {
	s.String(&cfg.Table, "table", "PACER_ASYNCEVENT_TABLE", dynamostore.DefaultTable, "DynamoDB table")
	s.String(&cfg.Queue, "queue", "PACER_ASYNCEVENT_QUEUE", sqsqueue.DefaultName, "SQS queue; its DLQ is <queue>-dlq")
	s.Int(&cfg.MaxReceives, "max-receives", "PACER_ASYNCEVENT_MAX_RECEIVES", sqsqueue.DefaultMaxReceives, "the DLQ's maxReceiveCount, used when creating the queue")
	s.AutoBool(&cfg.Setup, "setup", "PACER_ASYNCEVENT_SETUP", awsclient.Local, "create the table and queues if missing: true, false, or auto (true when the AWS endpoints are local)")
	DeclareEMF(s, &cfg.EMF)
}

// LoadAWS sets cfg.AWS with awsclient.Load (the standard chain, or the
// local stand-ins' endpoints when set) when it is nil and a client is still
// to be built from it. Open calls it; call it first to instrument the
// configuration it loads.
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

// Open builds the domain service over DynamoDB and SQS, creating the table
// and queues first when cfg.Setup is set. It returns the queue too, for the
// worker's consumer loop.
func Open(ctx context.Context, cfg Config) (*asyncevent.Service, *sqsqueue.Queue, error) {
	if cfg.Table == "" {
		cfg.Table = dynamostore.DefaultTable
	}
	if cfg.Queue == "" {
		cfg.Queue = sqsqueue.DefaultName
	}
	if err := cfg.LoadAWS(ctx); err != nil {
		return nil, nil, err
	}
	dc := cfg.DynamoDB
	if dc == nil {
		dc = awsclient.DynamoDB(*cfg.AWS)
	}
	sc := cfg.SQS
	if sc == nil {
		sc = awsclient.SQS(*cfg.AWS)
	}
	store := dynamostore.New(ddb.New(dc, ddb.Config{CursorKey: cfg.CursorKey, Observer: cfg.DDBObserver}), cfg.Table)
	if cfg.Setup {
		if err := store.Ensure(ctx); err != nil {
			return nil, nil, fmt.Errorf("asynceventbackend: %w", err)
		}
	}
	q, err := sqsqueue.Open(ctx, sc, sqsqueue.Config{Name: cfg.Queue, MaxReceives: cfg.MaxReceives, Ensure: cfg.Setup})
	if err != nil {
		return nil, nil, fmt.Errorf("asynceventbackend: %w", err)
	}
	return asyncevent.New(store, q, q, asyncevent.Config{EventCacheTTL: cfg.EventCacheTTL, RequeueAfter: cfg.RequeueAfter, DrawGrace: cfg.DrawGrace, CandidateWaits: cfg.CandidateWaits, WorkerID: cfg.WorkerID, Log: cfg.Log, Observer: cfg.Observer}), q, nil
}
