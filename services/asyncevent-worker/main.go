// Command asyncevent-worker processes AsyncEvent participation messages.
// Configuration comes from flags or PACER_* variables (see asyncworker).
// SIGINT or SIGTERM stops it gracefully: it stops receiving, finishes the
// messages in flight and deletes them.
package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/services/internal/asyncworker"
	"github.com/pacerhq/pacer/services/internal/server"
)

func main() {
	cfg := asyncworker.ConfigFromEnv()
	cfg.RegisterFlags(flag.CommandLine)
	flag.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "messages handled at once (PACER_WORKER_CONCURRENCY)")
	flag.IntVar(&cfg.Batch, "batch", cfg.Batch, "messages per receive, 1..10 (PACER_WORKER_BATCH)")
	flag.DurationVar(&cfg.Visibility, "visibility", cfg.Visibility, "visibility timeout (PACER_WORKER_VISIBILITY)")
	flag.DurationVar(&cfg.Wait, "wait", cfg.Wait, "long-poll wait, ≤ 20s (PACER_WORKER_WAIT)")
	flag.DurationVar(&cfg.SweepEvery, "sweep-every", cfg.SweepEvery, "sweep for requests stranded in RECEIVED this often; 0 turns it off (PACER_WORKER_SWEEP_EVERY)")
	flag.Parse()

	server.Main("asyncevent-worker", func(ctx context.Context, log *slog.Logger) error {
		aws, err := awsclient.Load(ctx)
		if err != nil {
			return err
		}
		cfg.AWS, cfg.Log = aws, log
		return asyncworker.Run(ctx, cfg)
	})
}
