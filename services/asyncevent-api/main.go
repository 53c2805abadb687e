// Command asyncevent-api serves the AsyncEvent HTTP API.
//
//	asyncevent-api [flags]        serve (configuration: flags or PACER_* env, see asynceventapi)
//	asyncevent-api openapi        print the OpenAPI spec (YAML) and exit
//
// SIGINT or SIGTERM shuts it down gracefully.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/server"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "openapi" {
		b, err := asynceventapi.OpenAPI()
		if err != nil {
			fmt.Fprintln(os.Stderr, "asyncevent-api:", err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
		return
	}
	cfg := asynceventapi.ConfigFromEnv()
	flag.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (PACER_ASYNCEVENT_ADDR)")
	cfg.RegisterFlags(flag.CommandLine)
	flag.BoolVar(&cfg.Dev, "dev", cfg.Dev, "dev mode: dev secrets and the X-Pacer-Dev-User header (PACER_DEV)")
	flag.Parse()

	server.Main("asyncevent-api", func(ctx context.Context, log *slog.Logger) error {
		aws, err := awsclient.Load(ctx)
		if err != nil {
			return err
		}
		cfg.AWS, cfg.Log = aws, log
		return asynceventapi.Run(ctx, cfg)
	})
}
