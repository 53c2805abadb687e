// Command asyncevent-worker processes AsyncEvent participation messages.
// Settings come from flags or PACER_* variables (`asyncevent-worker -h`
// lists them). SIGINT or SIGTERM stops it gracefully: it stops receiving,
// finishes the messages in flight and deletes them.
package main

import (
	"context"
	"log/slog"

	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/config"
	_ "github.com/pacerhq/pacer/services/internal/fallback" // CA roots and time zones: the image has none
)

func main() {
	var cfg asynceventworker.Config
	config.Main("asyncevent-worker", cfg.Declare, func(ctx context.Context, log *slog.Logger) error {
		cfg.Log = log
		return asynceventworker.Run(ctx, cfg)
	})
}
