// Command photo-api serves PhotoService's HTTP API.
//
//	photo-api            serve (config from the environment, see below)
//	photo-api openapi    print the OpenAPI spec (YAML) and exit
//
// Environment: PACER_PHOTO_ADDR (default 127.0.0.1:8082), PACER_STAGE
// (default dev: table PhotoService-dev), DATABASE_URL (Postgres; migrations
// are applied on start), the AWS SDK's standard variables (and
// AWS_ENDPOINT_URL_DYNAMODB for a local DynamoDB), PACER_JWT_SECRET or
// PACER_JWKS_URL (+ PACER_JWT_ISSUER, PACER_JWT_AUDIENCE), PACER_CURSOR_KEY,
// and PACER_DEV=1 for dev mode. SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/pacerhq/pacer/services/internal/photoapi"
	"github.com/pacerhq/pacer/services/internal/server"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "openapi" {
		if err := photoapi.WriteOpenAPI(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "photo-api:", err)
			os.Exit(1)
		}
		return
	}
	cfg := photoapi.ConfigFromEnv()
	server.Main("photo-api", func(ctx context.Context, log *slog.Logger) error {
		cfg.Log = log
		return photoapi.Run(ctx, cfg)
	})
}
