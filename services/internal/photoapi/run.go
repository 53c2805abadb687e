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
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/photobackend"
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
	// DatabaseStartTimeout bounds the first connection to it
	// (PACER_DATABASE_START_TIMEOUT): past it, start-up fails saying what
	// to check.
	DatabaseStartTimeout time.Duration
	// Setup creates the table if it is missing (PACER_PHOTO_SETUP; Declare
	// defaults it to true when the AWS endpoints are local). Without it the
	// table must exist already, as the deployment creates it: start-up only
	// checks it (ddb.Table.Check), so the API needs no CreateTable.
	Setup bool
	// AWS is the AWS configuration; nil loads it with awsclient.Load (which
	// honours AWS_ENDPOINT_URL_DYNAMODB for the local stand-in).
	AWS *aws.Config
	// Dev turns on dev mode: the built-in JWT secret and cursor key, and the
	// X-Pacer-Dev-* impersonation headers (PACER_DEV=1).
	Dev bool
	// Auth says how tokens are verified (PACER_JWKS_URL, PACER_JWT_*).
	Auth server.AuthSettings
	// ConsumedCapacity makes every DynamoDB call ask for its consumed
	// capacity (PACER_CONSUMED_CAPACITY; Declare defaults it to true unless
	// the AWS endpoints are local, see metrics.DeclareConsumedCapacity).
	ConsumedCapacity bool
	// ImageBaseURL is where the pages load photos from: the CDN or bucket
	// URL a photo's processedKey is appended to (PACER_PHOTO_IMAGE_BASE_URL).
	ImageBaseURL string
	// EmbedOrigins may frame the pages (server.PageConfig.EmbedOrigins;
	// PACER_EMBED_ORIGINS).
	EmbedOrigins server.Origins
	// CORSOrigins may call the API from their pages (server.CORSConfig;
	// PACER_CORS_ORIGINS).
	CORSOrigins server.Origins
	// Bucket holds the photos' originals (rawKey; PACER_PHOTO_BUCKET):
	// organizers get S3 presigned GETs of them. Originals, if set, signs
	// instead (the dev runner's local folder).
	Bucket    string
	Originals Originals
	// OriginalTTL is how long a signed link to an original works
	// (PACER_PHOTO_ORIGINAL_TTL).
	OriginalTTL time.Duration
	// Limits are the public name search's rate limit (docs/ratelimit.md).
	Limits LimitSettings
	// Bounds are the operations' deadlines and the in-flight bound
	// (docs/capacity.md).
	Bounds server.Bounds
	// EMF ships the metrics CloudWatch alarms read (PACER_METRICS_EMF,
	// PACER_METRICS_STAGE; metrics.EMF): the HTTP problems, the key set,
	// the AWS calls' outcomes.
	EMF metrics.EMF
	// Log receives the service's logs (default slog.Default()).
	Log *slog.Logger
	// Ready, if set, is called once the API serves, with its base URL
	// ("http://127.0.0.1:8082") and its Deps (the dev runner loads demo
	// data through Deps.Directory and Deps.Ingest); an error it returns is
	// logged, and the API keeps serving.
	Ready func(ctx context.Context, baseURL string, d Deps) error
}

// Declare declares the API's settings on s.
func (cfg *Config) Declare(s *config.Set) {
	s.String(&cfg.Addr, "addr", "PACER_PHOTO_ADDR", DefaultAddr, "listen address")
	s.String(&cfg.Stage, "stage", "PACER_STAGE", "dev", "stage: the table is PhotoService-{stage}")
	s.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL, required (the truth; migrations are applied on start)")
	s.Duration(&cfg.DatabaseStartTimeout, "database-start-timeout", "PACER_DATABASE_START_TIMEOUT", photobackend.DefaultStartTimeout,
		"how long start-up waits for Postgres to answer before it fails, naming the host and what to check")
	s.String(&cfg.Bucket, "bucket", "PACER_PHOTO_BUCKET", "", "S3 bucket of the photos' originals (rawKey): organizers get presigned GETs of them (s3:GetObject); empty: no originals")
	s.Duration(&cfg.OriginalTTL, "original-ttl", "PACER_PHOTO_ORIGINAL_TTL", DefaultOriginalTTL, "how long a signed link to an original works")
	s.String(&cfg.ImageBaseURL, "image-base-url", "PACER_PHOTO_IMAGE_BASE_URL", "", "base URL of the processed images (CDN or bucket) the pages show photos from: <url>/<processedKey>; empty: no images")
	s.AutoBool(&cfg.Setup, "setup", "PACER_PHOTO_SETUP", awsclient.Local, "create the table if missing: true, false, or auto (true when the AWS endpoints are local); false only checks that it exists")
	s.Bool(&cfg.Dev, "dev", "PACER_DEV", false, "dev mode: the built-in dev JWT secret and cursor key, and the X-Pacer-Dev-* headers")
	cfg.Auth.Declare(s)
	server.DeclareEmbedOrigins(s, &cfg.EmbedOrigins)
	server.DeclareCORSOrigins(s, &cfg.CORSOrigins)
	metrics.DeclareConsumedCapacity(s, &cfg.ConsumedCapacity)
	metrics.DeclareEMF(s, &cfg.EMF)
	cfg.Limits.Declare(s)
	cfg.Bounds.Declare(s, InFlightPerCPU)
}

// InFlightPerCPU is the API's in-flight bound per CPU (server.Bounds):
// the requests one CPU serves in a read deadline at the CPU a request is
// planned to cost (docs/capacity.md, Deadlines and the in-flight bound).
const InFlightPerCPU = 2000

// Title and version of the API in its spec.
const (
	title   = "Pacer PhotoService API"
	version = "1.0.0"
	summary = "Race photos: organizers manage events, photographers and runners; the processing pipeline ingests " +
		"processed photos (checked against the organizer's directory, then indexed for search); organizers search by bib, " +
		"photographer or event; runners search published events by bib. Errors are RFC 9457 problem+json. " +
		"Text lengths (minLength, maxLength) count characters, i.e. Unicode code points, as JSON Schema does: '가' and '👍' are one each, 'é' written as e and a combining accent is two."
)

// NewAPI returns the API on mux with the health probe, authentication
// (when v is not nil; dev enables the dev header) and the routes
// registered. The spec always documents the dev-mode impersonation
// headers, which are honoured only in dev mode.
func NewAPI(mux *http.ServeMux, d Deps, v *auth.Verifier, dev bool) huma.API {
	return server.NewServiceAPI(mux, title, version, summary+"\n\n"+problems(nil).Doc(), "http://"+DefaultAddr, v, dev, d.Bounds,
		func(api huma.API) { Register(api, d) })
}

// WriteOpenAPI writes the spec as YAML, without starting anything (it
// needs no database), as `photo-api openapi` prints it and
// openapi/photo.yaml holds it.
func WriteOpenAPI(w io.Writer) error {
	return server.WriteOpenAPI(w, NewAPI(http.NewServeMux(), Deps{}, nil, false))
}

// Run opens the backend (photobackend.OpenAPI: it applies the migrations and
// ensures the table with cfg.Setup, else checks that it exists and has its
// indexes), and serves the API over every role, and its metrics on GET
// /metrics (see docs/metrics.md), until ctx ends, then shuts down
// gracefully.
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
	key, err := server.CursorKeyFromEnv(cfg.Dev)
	if err != nil {
		return err
	}
	verifier, err := cfg.Auth.Verifier(ctx, cfg.Dev)
	if err != nil {
		return err
	}
	h, err := newHandler(ctx, cfg, key, verifier)
	if err != nil {
		return err
	}
	defer h.roles.Close()
	stopEMF, err := cfg.EMF.Start(h.reg, cfg.Log)
	if err != nil {
		return err
	}
	defer stopEMF() // after the graceful shutdown: the last lines count its last requests
	d := h.deps
	l := cfg.Listener
	if l == nil {
		if l, err = server.Listen(cfg.Addr); err != nil {
			return err
		}
	}
	cfg.Log.Info("photo-api listening", "addr", l.Addr().String(), "table", dynamostore.TableName(cfg.Stage), "dev", cfg.Dev)
	return server.ServeReady(ctx, &http.Server{Handler: h.handler}, l, cfg.Log, cfg.Ready, d)
}

// handler is the API as Run serves it: every route and page, and
// /metrics, timed, and cross-origin calls from cfg.CORSOrigins; and the
// roles under it.
type handler struct {
	handler http.Handler
	deps    Deps
	roles   *photobackend.APIRoles
	reg     *prometheus.Registry // the metrics the handler counts
}

// newHandler opens the backend (photobackend.OpenAPI) and builds the
// handler Run serves over it: Run and the cost benchmarks
// (cost_bench_test.go) share it, so a benchmark measures what production
// runs. Close h.roles when done.
func newHandler(ctx context.Context, cfg Config, cursorKey []byte, verifier *auth.Verifier) (*handler, error) {
	var awsCfg aws.Config
	if cfg.AWS != nil {
		awsCfg = *cfg.AWS
	} else {
		var err error
		if awsCfg, err = awsclient.Load(ctx); err != nil {
			return nil, fmt.Errorf("photo-api: %w", err)
		}
	}
	m := newMetrics(&awsCfg, dynamostore.TableName(cfg.Stage), verifier)
	var observer ddb.Observer // asks for consumed capacity
	if cfg.ConsumedCapacity {
		observer = m.aws
	}
	roles, err := photobackend.OpenAPI(ctx, photobackend.Config{Stage: cfg.Stage, DatabaseURL: cfg.DatabaseURL, StartTimeout: cfg.DatabaseStartTimeout, Setup: cfg.Setup, AWS: awsCfg,
		CursorKey: cursorKey, DDBObserver: observer, Observer: m.photo, Log: cfg.Log})
	if err != nil {
		return nil, fmt.Errorf("photo-api: %w", err)
	}
	if err := cfg.Limits.CountReplicas(ctx, awsclient.DynamoDB(awsCfg), cfg.Setup, "photo-api", cfg.Log); err != nil {
		roles.Close()
		return nil, fmt.Errorf("photo-api: %w", err)
	}
	limits, err := cfg.Limits.Limits(m.limited.Refused)
	if err != nil {
		roles.Close()
		return nil, fmt.Errorf("photo-api: %w", err)
	}
	mux := http.NewServeMux()
	d := rolesDeps(roles, cfg.Log)
	cfg.Bounds.Log = cfg.Log
	d.Limits, d.Bounds = limits, cfg.Bounds
	d.Originals, d.OriginalTTL = cfg.Originals, cfg.OriginalTTL
	if d.Originals == nil && cfg.Bucket != "" {
		d.Originals = NewS3Originals(awsCfg, cfg.Bucket)
	}
	api := NewAPI(mux, d, verifier, cfg.Dev)
	if err := RegisterPages(mux, cfg.Dev, cfg.ImageBaseURL, cfg.EmbedOrigins); err != nil {
		roles.Close()
		return nil, err
	}
	served, err := server.CORS(m.serve(mux), api, server.CORSConfig{Origins: cfg.CORSOrigins, Dev: cfg.Dev})
	if err != nil {
		roles.Close()
		return nil, err
	}
	return &handler{handler: served, deps: d, roles: roles, reg: m.reg}, nil
}

// rolesDeps are the routes' roles.
func rolesDeps(r *photobackend.APIRoles, log *slog.Logger) Deps {
	return Deps{Ingest: r.Ingest, Search: r.Search, Directory: r.Directory, Privacy: r.Privacy, Timing: r.Timing, Log: log}
}
