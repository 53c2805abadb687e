package photoapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/danielgtaylor/huma/v2"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerhq/pacer/migrations"
	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/modules/photo/pgstore"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/server"
)

// DefaultAddr is where photo-api listens unless PACER_PHOTO_ADDR says
// otherwise.
const DefaultAddr = "127.0.0.1:8082"

// Config configures Run.
type Config struct {
	// Addr is the listen address (PACER_PHOTO_ADDR, default DefaultAddr).
	Addr string
	// Listener, if set, is used instead of listening on Addr.
	Listener net.Listener
	// Stage names the table PhotoService-{Stage} (PACER_STAGE, default dev).
	Stage string
	// DatabaseURL is the Postgres truth (DATABASE_URL). Migrations are
	// applied to it on start.
	DatabaseURL string
	// AWS is the AWS configuration; nil loads it with awsclient.Load (which
	// honours AWS_ENDPOINT_URL_DYNAMODB for the local stand-in).
	AWS *aws.Config
	// Dev turns on dev mode: the built-in JWT secret and cursor key, and the
	// X-Pacer-Dev-* impersonation headers (PACER_DEV=1).
	Dev bool
	// Log receives the service's logs (default slog.Default()).
	Log *slog.Logger
	// OnReady, if set, is called once the service is ready to serve, with
	// its base URL and domain service (the dev runner loads demo data
	// through it).
	OnReady func(ctx context.Context, baseURL string, svc *photo.Service) error
}

// Declare declares the API's settings on s.
func (cfg *Config) Declare(s *config.Set) {
	s.String(&cfg.Addr, "addr", "PACER_PHOTO_ADDR", DefaultAddr, "listen address")
	s.String(&cfg.Stage, "stage", "PACER_STAGE", "dev", "stage: the table is PhotoService-{stage}")
	s.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL, required (the truth; migrations are applied on start)")
	s.Bool(&cfg.Dev, "dev", "PACER_DEV", false, "dev mode: the built-in dev JWT secret and cursor key, and the X-Pacer-Dev-* headers")
}

// Title and version of the API in its spec.
const (
	title   = "Pacer PhotoService API"
	version = "1.0.0"
	summary = "Race photos: organizers manage events, photographers and runners; the processing pipeline ingests " +
		"processed photos (PHOTO + BIB_INDEX items in DynamoDB, validated against Postgres); organizers search by bib, " +
		"photographer or event; runners search published events by bib. Errors are RFC 9457 problem+json. " +
		"Text lengths (minLength, maxLength) count characters, i.e. Unicode code points, as JSON Schema does: '가' and '👍' are one each, 'é' written as e and a combining accent is two."
)

// NewAPI returns the service's Huma API on mux, without routes.
func NewAPI(mux *http.ServeMux, dev bool) huma.API {
	return server.NewAPI(mux, title, version, summary, "http://"+DefaultAddr, dev)
}

// WriteOpenAPI writes the service's OpenAPI spec (YAML) to w, as `photo-api
// openapi` prints it and openapi/photo.yaml holds it. It needs no database.
func WriteOpenAPI(w io.Writer) error {
	// The spec documents the dev-mode headers, as the service honours them
	// in dev mode (they are ignored otherwise, and the text says so).
	api := NewAPI(http.NewServeMux(), true)
	server.RegisterHealth(api)
	Register(api, Deps{Service: photo.NewService(photo.Config{})})
	return server.WriteOpenAPI(w, api)
}

// Run applies the migrations, ensures the table, and serves the API, and
// its metrics on GET /metrics (see docs/metrics.md), until ctx ends, then
// shuts down gracefully.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Stage == "" {
		cfg.Stage = "dev"
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.DatabaseURL == "" {
		return errors.New("photo-api: set DATABASE_URL to the Postgres database")
	}
	if err := migrations.Apply(ctx, cfg.DatabaseURL); err != nil {
		return fmt.Errorf("photo-api: %w", err)
	}
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("photo-api: postgres: %w", err)
	}
	defer pool.Close()

	var awsCfg aws.Config
	if cfg.AWS != nil {
		awsCfg = *cfg.AWS
	} else if awsCfg, err = awsclient.Load(ctx); err != nil {
		return fmt.Errorf("photo-api: %w", err)
	}
	key, err := server.CursorKeyFromEnv(cfg.Dev)
	if err != nil {
		return err
	}
	m := newMetrics(&awsCfg, dynamostore.TableName(cfg.Stage))
	db := ddb.New(awsclient.DynamoDB(awsCfg), ddb.Config{CursorKey: key, Observer: m.aws})
	table := db.Table(dynamostore.TableName(cfg.Stage), &dynamostore.Schema)
	ectx, cancel := context.WithTimeout(ctx, time.Minute)
	err = table.Ensure(ectx)
	cancel()
	if err != nil {
		return fmt.Errorf("photo-api: %w", err)
	}
	verifier, err := server.AuthFromEnv(ctx, cfg.Dev)
	if err != nil {
		return err
	}
	svc := photo.NewService(photo.Config{Truth: pgstore.New(pool), Index: dynamostore.New(table), Log: cfg.Log, Observer: m.photo})

	mux := http.NewServeMux()
	api := NewAPI(mux, cfg.Dev)
	server.RegisterHealth(api)
	server.Authenticate(api, verifier, cfg.Dev)
	Register(api, Deps{Service: svc, Log: cfg.Log})

	l := cfg.Listener
	if l == nil {
		if l, err = server.Listen(cfg.Addr); err != nil {
			return err
		}
	}
	base := "http://" + l.Addr().String()
	cfg.Log.Info("photo-api listening", "url", base, "table", table.Name(), "dev", cfg.Dev)
	srv := &http.Server{Handler: m.serve(mux)}
	served := make(chan error, 1)
	go func() { served <- server.Serve(ctx, srv, l) }()
	if cfg.OnReady != nil {
		if err := cfg.OnReady(ctx, base, svc); err != nil {
			cfg.Log.Error("photo-api: on-ready hook failed", "err", err)
		}
	}
	return <-served
}
