// Command dev runs the whole Pacer platform on one machine, behind
// `make run`: it starts the local stand-ins for DynamoDB, SQS and Postgres
// (sdk/standin), exports their endpoints, starts the platform's services
// in-process (see services in service.go) and serves a health endpoint.
// Ctrl-C (SIGINT) or SIGTERM stops everything.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pacerhq/pacer/services/dev/workerpool"
	"github.com/pacerhq/pacer/services/internal/config"
)

func main() {
	var f flags
	config.Parse("pacer-dev", f.Declare)
	autoscaleSettings = &f.autoscale

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(logger) // code that logs through slog's default prints the same way
	standinLog, closeLog, err := openStandinLog(f.standinLog)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
	defer closeLog()
	if f.standinLog != "-" {
		fmt.Printf("Starting the stand-ins (their output goes to %s)...\n", f.standinLog)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// A second Ctrl-C exits at once; the stand-ins die with us (Pdeathsig).
		<-ctx.Done()
		stop()
	}()
	err = run(ctx, Config{
		Addr:       f.addr,
		Database:   f.db,
		StandinLog: standinLog,
		Out:        os.Stdout,
		Log:        logger,
		Services:   services,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		closeLog()
		os.Exit(1)
	}
	fmt.Println("Stopped.")
}

// flags are the dev runner's own settings.
type flags struct {
	addr, db, standinLog string
	autoscale            workerpool.Settings
}

// Declare declares them on s.
func (f *flags) Declare(s *config.Set) {
	s.String(&f.addr, "addr", "PACER_DEV_ADDR", "127.0.0.1:8080", "listen address of the health endpoint")
	s.String(&f.db, "db", "PACER_DEV_DB", "pacer_dev", "dev database, recreated empty on the local Postgres at start and dropped at exit; owned by one running stack at a time (ignored when DATABASE_URL is set)")
	s.String(&f.standinLog, "standin-log", "PACER_DEV_STANDIN_LOG", ".cache/dev/standin.log", `file for the stand-ins' output; "-" for stderr`)
	f.autoscale.Declare(s)
}

// envOr is the environment variable key, or def when it is unset or empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
