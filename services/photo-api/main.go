// Command photo-api serves PhotoService's HTTP API.
//
//	photo-api [flags]    serve (settings: flags or PACER_* variables and DATABASE_URL; -h lists them)
//	photo-api openapi    print the OpenAPI spec (YAML) and exit
//
// The AWS SDK's standard variables say where DynamoDB is
// (AWS_ENDPOINT_URL_DYNAMODB for a local one); the secrets
// (PACER_JWT_SECRET, PACER_CURSOR_KEY) come from the environment only.
// SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/pacerhq/pacer/services/internal/config"
	_ "github.com/pacerhq/pacer/services/internal/fallback" // CA roots and time zones: the image has none
	"github.com/pacerhq/pacer/services/internal/photoapi"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "openapi" {
		config.Exit("photo-api", photoapi.WriteOpenAPI(os.Stdout))
		return
	}
	var cfg photoapi.Config
	config.Main("photo-api", cfg.Declare, func(ctx context.Context, log *slog.Logger) error {
		cfg.Log = log
		return photoapi.Run(ctx, cfg)
	})
}
