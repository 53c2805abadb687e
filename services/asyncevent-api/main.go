// Command asyncevent-api serves the AsyncEvent HTTP API.
//
//	asyncevent-api [flags]        serve (settings: flags or PACER_* variables; -h lists them)
//	asyncevent-api openapi        print the OpenAPI spec (YAML) and exit
//
// SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/config"
	_ "github.com/pacerhq/pacer/services/internal/fallback" // CA roots and time zones: the image has none
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "openapi" {
		config.Exit("asyncevent-api", asynceventapi.WriteOpenAPI(os.Stdout))
		return
	}
	var cfg asynceventapi.Config
	config.Main("asyncevent-api", cfg.Declare, func(ctx context.Context, log *slog.Logger) error {
		cfg.Log = log
		return asynceventapi.Run(ctx, cfg)
	})
}
