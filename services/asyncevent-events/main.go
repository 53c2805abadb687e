// Command asyncevent-events publishes AsyncEvent's analytics events: it
// reads AsyncEventTable's DynamoDB stream and sends the events it derives
// to EventBridge (or, with -sink=file, to a local folder in Firehose's S3
// layout). Settings come from flags or PACER_* variables
// (`asyncevent-events -h` lists them). Run one per table. SIGINT or SIGTERM
// stops it gracefully: it finishes the batches in hand, checkpoints them
// and flushes the sink. See docs/events.md.
package main

import (
	"context"
	"log/slog"

	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/config"
	_ "github.com/pacerhq/pacer/services/internal/fallback" // CA roots and time zones: the image has none
)

func main() {
	var cfg asynceventevents.Config
	config.Main("asyncevent-events", cfg.Declare, func(ctx context.Context, log *slog.Logger) error {
		cfg.Log = log
		return asynceventevents.Run(ctx, cfg)
	})
}
