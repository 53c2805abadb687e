// Package asyncworker runs AsyncEvent workers: the consumer runtime
// (sdk/consumer) reading the participation queue and the
// domain's Process deciding each message. services/asyncevent-worker and
// the dev runner both call Run.
//
// Configuration (environment; services/asyncevent-worker also takes flags):
//
//	PACER_ASYNCEVENT_TABLE          DynamoDB table (default AsyncEventTable)
//	PACER_ASYNCEVENT_QUEUE          SQS queue (default asyncevent-participations; DLQ <name>-dlq)
//	PACER_ASYNCEVENT_MAX_RECEIVES   DLQ maxReceiveCount used when creating the queue (default 3)
//	PACER_ASYNCEVENT_SETUP          1: create the table and queues if missing (default: on for a local stack)
//	PACER_WORKER_CONCURRENCY        messages handled at once (default 10)
//	PACER_WORKER_BATCH              messages per receive, 1..10 (default 10)
//	PACER_WORKER_VISIBILITY         visibility timeout, e.g. 30s (default 30s)
//	PACER_WORKER_WAIT               long-poll wait, up to 20s (default 10s)
//	PACER_WORKER_SWEEP_EVERY        how often this worker sweeps for stranded requests (default 10m; 0 turns it off)
//
// The sweep (asyncevent.Service.SweepStranded) re-enqueues requests left
// RECEIVED by an ingest that died between its two writes, so that nothing
// is stranded even if nobody reads the request. It scans the table, so its
// cost grows with the table: each worker sweeps once per interval (the
// first at a random point of the first interval, then jittered by up to a
// fifth, so that workers do not scan together). With many
// workers, turn it off on all but one or two, or set 0 everywhere and call
// the admin API's POST /admin/requests/sweep from a scheduler. It never
// re-queues FAILED_INGEST_ENQUEUE requests: that stays an operator's call.
//
// Against local-aws-sqs use a short wait (e.g. 1s): it answers a long poll
// only when the batch is full or the wait has passed, whereas SQS answers
// as soon as a message is available.
package asyncworker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asyncbackend"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Config configures Run.
type Config struct {
	// Config says where the data lives (table, queues, clients) and holds
	// the logger.
	asyncbackend.Config

	Concurrency int
	Batch       int
	Visibility  time.Duration
	Wait        time.Duration
	// SweepEvery is how often to sweep for stranded requests (0: never).
	SweepEvery time.Duration

	// Ready, if set, is called once the table and queue are open and the
	// worker starts receiving.
	Ready func()
}

// ConfigFromEnv reads the PACER_* variables (see the package doc).
func ConfigFromEnv() Config {
	return Config{
		Config:      asyncbackend.ConfigFromEnv(),
		Concurrency: server.EnvInt("PACER_WORKER_CONCURRENCY", 10),
		Batch:       server.EnvInt("PACER_WORKER_BATCH", 10),
		Visibility:  server.EnvDuration("PACER_WORKER_VISIBILITY", 30*time.Second),
		Wait:        server.EnvDuration("PACER_WORKER_WAIT", 10*time.Second),
		SweepEvery:  server.EnvDuration("PACER_WORKER_SWEEP_EVERY", 10*time.Minute),
	}
}

// Run consumes the queue until ctx is cancelled, then stops receiving,
// finishes the messages in flight, deletes them, and returns.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	log := cfg.Log
	if cfg.Batch > 10 {
		return fmt.Errorf("asyncworker: batch %d: SQS receives at most 10", cfg.Batch)
	}
	svc, q, err := asyncbackend.Open(ctx, cfg.Config)
	if err != nil {
		return err
	}
	log.Info("asyncevent-worker consuming", "queue", cfg.Queue, "table", cfg.Table, "concurrency", cfg.Concurrency,
		"batch", cfg.Batch, "visibility", cfg.Visibility, "wait", cfg.Wait, "sweepEvery", cfg.SweepEvery)
	if cfg.Ready != nil {
		cfg.Ready()
	}
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		sweep(ctx, svc, cfg.SweepEvery, log)
	}()
	err = consumer.Run(ctx, q, Handler(svc, log), consumer.Config{
		Concurrency: cfg.Concurrency, Batch: cfg.Batch, Visibility: cfg.Visibility, Wait: cfg.Wait, Log: log,
	})
	<-swept
	log.Info("asyncevent-worker stopped")
	return err
}
