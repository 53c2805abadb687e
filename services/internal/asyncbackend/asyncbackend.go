// Package asyncbackend wires the AsyncEvent domain service to its
// DynamoDB table and SQS queues. The API (asynceventapi) and the worker
// (asyncworker) both open it, with the same configuration.
package asyncbackend

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Config says where AsyncEvent's data lives.
type Config struct {
	Table       string // default dynamostore.DefaultTable
	Queue       string // default sqsqueue.DefaultName; its DLQ is <Queue>-dlq
	MaxReceives int    // the DLQ's maxReceiveCount (default sqsqueue.DefaultMaxReceives)
	// Setup creates the table and the queues if they are missing.
	Setup bool

	AWS aws.Config
	// DynamoDB and SQS override the clients built from AWS (e.g. to count
	// calls or inject faults).
	DynamoDB ddb.Client
	SQS      sqsqueue.Client

	CursorKey     []byte        // seals pagination cursors
	EventCacheTTL time.Duration // see asyncevent.Config
	RequeueAfter  time.Duration // see asyncevent.Config (0: its default)
	Log           *slog.Logger
}

// ConfigFromEnv reads PACER_ASYNCEVENT_TABLE, PACER_ASYNCEVENT_QUEUE,
// PACER_ASYNCEVENT_MAX_RECEIVES and PACER_ASYNCEVENT_SETUP (default on for a
// local, loopback stack).
func ConfigFromEnv() Config {
	return Config{
		Table:       server.Env("PACER_ASYNCEVENT_TABLE", dynamostore.DefaultTable),
		Queue:       server.Env("PACER_ASYNCEVENT_QUEUE", sqsqueue.DefaultName),
		MaxReceives: server.EnvInt("PACER_ASYNCEVENT_MAX_RECEIVES", sqsqueue.DefaultMaxReceives),
		Setup:       server.EnvBool("PACER_ASYNCEVENT_SETUP", awsclient.Local()),
	}
}

// RegisterFlags adds -table, -queue, -max-receives and -setup to fs, with
// cfg's values (from the environment) as defaults.
func (cfg *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&cfg.Table, "table", cfg.Table, "DynamoDB table (PACER_ASYNCEVENT_TABLE)")
	fs.StringVar(&cfg.Queue, "queue", cfg.Queue, "SQS queue; the DLQ is <queue>-dlq (PACER_ASYNCEVENT_QUEUE)")
	fs.IntVar(&cfg.MaxReceives, "max-receives", cfg.MaxReceives, "DLQ maxReceiveCount when creating the queue (PACER_ASYNCEVENT_MAX_RECEIVES)")
	fs.BoolVar(&cfg.Setup, "setup", cfg.Setup, "create the table and queues if missing (PACER_ASYNCEVENT_SETUP; default on for a local stack)")
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
	dc := cfg.DynamoDB
	if dc == nil {
		dc = awsclient.DynamoDB(cfg.AWS)
	}
	sc := cfg.SQS
	if sc == nil {
		sc = awsclient.SQS(cfg.AWS)
	}
	store := dynamostore.New(ddb.New(dc, ddb.Config{CursorKey: cfg.CursorKey}), cfg.Table)
	if cfg.Setup {
		if err := store.Ensure(ctx); err != nil {
			return nil, nil, fmt.Errorf("asyncbackend: %w", err)
		}
	}
	q, err := sqsqueue.Open(ctx, sc, sqsqueue.Config{Name: cfg.Queue, MaxReceives: cfg.MaxReceives, Ensure: cfg.Setup})
	if err != nil {
		return nil, nil, fmt.Errorf("asyncbackend: %w", err)
	}
	return asyncevent.New(store, q, q, asyncevent.Config{EventCacheTTL: cfg.EventCacheTTL, RequeueAfter: cfg.RequeueAfter, Log: cfg.Log}), q, nil
}
