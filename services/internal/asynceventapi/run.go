// Package asynceventapi is the AsyncEvent HTTP API (Huma v2): the user
// participation endpoints, the admin endpoints, the mapping of domain
// errors to RFC 9457 problems (errors.go, in one place), and Run, which
// services/asyncevent-api and the dev runner both call.
//
// Settings come from flags or PACER_* variables (Config.Declare; `-h` and
// docs/settings.md list them, token verification's among them); the
// secrets (PACER_JWT_SECRET, PACER_CURSOR_KEY) from the environment only
// (services/internal/server).
//
// EventConfig items are cached in process for 2 s (see package asyncevent),
// which keeps a new participation at 3 AWS calls.
package asynceventapi

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/server"
)

// DefaultAddr is where the API listens unless told otherwise.
const DefaultAddr = "127.0.0.1:8081"

// Title and Version name the API in its spec.
const (
	Title   = "Pacer AsyncEvent API"
	Version = "1.0.0"
)

const description = "First-come and lottery event participation. `POST /events/{eventId}/participations` answers 202 with a " +
	"requestId at once; a queue and workers decide the outcome, which clients poll with `GET /requests/{requestId}`. " +
	"The user is always the bearer token's `sub`; admin operations need the `admin` role. Errors are RFC 9457 problems. " +
	"Times are epoch milliseconds."

// NewAPI returns the API on mux with the health probe, the readiness
// report (the key set's check, then d.Ready), authentication
// (when v is not nil; dev enables the dev header) and the routes
// registered. The spec always documents the dev-mode impersonation
// headers, which are honoured only in dev mode.
func NewAPI(mux *http.ServeMux, d Deps, v *auth.Verifier, dev bool) huma.API {
	return server.NewServiceAPI(mux, Title, Version, description+"\n\n"+problems(nil).Doc(), "http://"+DefaultAddr, v, dev, d.Bounds,
		func(api huma.API) { Register(api, d) }, d.Ready...)
}

// WriteOpenAPI writes the spec as YAML, without starting anything.
func WriteOpenAPI(w io.Writer) error {
	return server.WriteOpenAPI(w, NewAPI(http.NewServeMux(), Deps{}, nil, false))
}

// Config configures Run.
type Config struct {
	// Config says where the data lives (table, queues, clients) and holds
	// the logger. Its CursorKey defaults to server.CursorKeyFromEnv.
	asynceventbackend.Config

	Addr     string
	Listener net.Listener // if set, used instead of listening on Addr
	// Dev enables dev mode (dev header, dev secrets).
	Dev bool
	// Auth says how tokens are verified (PACER_JWKS_URL, PACER_JWT_*),
	// unless Verifier is set.
	Auth server.AuthSettings
	// EmbedOrigins may frame the pages (server.PageConfig.EmbedOrigins).
	EmbedOrigins server.Origins
	// CORSOrigins may call the API from their pages (server.CORSConfig;
	// PACER_CORS_ORIGINS).
	CORSOrigins server.Origins
	// Verifier defaults to Auth's (server.AuthSettings.Verifier).
	Verifier *auth.Verifier
	// Limits are the participation and poll rate limits (docs/ratelimit.md).
	Limits server.LimitSettings
	// Bounds are the operations' deadlines and the in-flight bound
	// (docs/capacity.md).
	Bounds server.Bounds
	// HumanCheck configures the human check of the events requiring one.
	HumanCheck HumanCheckSettings
	// Ready, if set, is called once the API serves, with its base URL
	// ("http://127.0.0.1:8081") and its Deps; an error it returns is
	// logged, and the API keeps serving.
	Ready func(ctx context.Context, baseURL string, d Deps) error
}

// Declare declares the API's settings, and the backend's, on s.
func (cfg *Config) Declare(s *config.Set) {
	s.String(&cfg.Addr, "addr", "PACER_ASYNCEVENT_ADDR", DefaultAddr, "listen address")
	cfg.Config.Declare(s)
	s.Bool(&cfg.Dev, "dev", "PACER_DEV", false, "dev mode: the built-in dev JWT secret and cursor key, and the X-Pacer-Dev-* headers")
	cfg.Auth.Declare(s)
	server.DeclareEmbedOrigins(s, &cfg.EmbedOrigins)
	server.DeclareCORSOrigins(s, &cfg.CORSOrigins)
	metrics.DeclareConsumedCapacity(s, &cfg.ConsumedCapacity)
	cfg.Limits.Declare(s)
	cfg.Bounds.Declare(s, InFlightPerCPU)
	cfg.HumanCheck.Declare(s)
}

// InFlightPerCPU is the API's in-flight bound per CPU (server.Bounds):
// the requests one CPU serves in a read deadline at the CPU a request
// costs (docs/capacity.md, Deadlines and the in-flight bound).
const InFlightPerCPU = 4000

// Run serves the API, and its metrics on GET /metrics (see
// docs/metrics.md), until ctx is cancelled, then shuts down gracefully.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	log := cfg.Log
	if cfg.Verifier == nil {
		v, err := cfg.Auth.Verifier(ctx, cfg.Dev)
		if err != nil {
			return err
		}
		cfg.Verifier = v
	}
	if cfg.CursorKey == nil {
		k, err := server.CursorKeyFromEnv(cfg.Dev)
		if err != nil {
			return err
		}
		cfg.CursorKey = k
	}
	h, err := newHandler(ctx, &cfg)
	if err != nil {
		return err
	}
	stopEMF, err := cfg.EMF.Start(h.metrics.reg, log)
	if err != nil {
		return err
	}
	defer stopEMF() // after the graceful shutdown: the last lines count its last requests
	handler, d := h.handler, h.deps
	l := cfg.Listener
	if l == nil {
		if l, err = server.Listen(cfg.Addr); err != nil {
			return err
		}
	}
	log.Info("asyncevent-api listening", "addr", l.Addr().String(), "table", cfg.Table, "queue", cfg.Queue, "dev", cfg.Dev)
	return server.ServeReady(ctx, &http.Server{Handler: handler}, l, log, cfg.Ready, d)
}

// handler is the API as Run serves it: every route, the pages and
// /metrics, timed, and cross-origin calls from cfg.CORSOrigins.
type handler struct {
	handler http.Handler
	deps    Deps
	metrics *apiMetrics
}

// newHandler builds the API process's roles (asynceventbackend.OpenAPI)
// and the handler Run serves over them: Run and the cost benchmarks
// (cost_bench_test.go) share it, so a benchmark measures what production
// runs. cfg.Verifier must be set.
func newHandler(ctx context.Context, cfg *Config) (*handler, error) {
	if err := cfg.LoadAWS(ctx); err != nil {
		return nil, err
	}
	m := newMetrics(cfg)
	provider, err := cfg.HumanCheck.provider()
	if err != nil {
		return nil, err
	}
	cfg.Humans = HumanVerifier(provider)
	if err := cfg.Limits.CountReplicas(ctx, cfg.DynamoDBClient(), cfg.Setup, "asyncevent-api", cfg.Log); err != nil {
		return nil, err
	}
	limits, err := cfg.Limits.Limits(m.limited.Refused)
	if err != nil {
		return nil, err
	}
	cfg.EventLimiter = NewEventLimiter(limits.Limiter)
	roles, err := asynceventbackend.OpenAPI(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	asynceventbackend.NewUnsureWrites(m.reg, roles.Ingest.QueuedAtUnsure)
	mux := http.NewServeMux()
	cfg.Bounds.Log = cfg.Log
	d := Deps{Ingest: roles.Ingest, Query: roles.Query, Admin: roles.Admin, Operations: roles.Operations, TagKey: cfg.CursorKey, Limits: limits, Bounds: cfg.Bounds, Log: cfg.Log,
		Ready: []server.Checker{HumanCheckReady(provider)}}
	api := NewAPI(mux, d, cfg.Verifier, cfg.Dev)
	if err := RegisterPages(mux, cfg.Dev, cfg.EmbedOrigins, cfg.HumanCheck.Widget()); err != nil {
		return nil, err
	}
	served, err := server.CORS(m.serve(mux, roles.Operations, roles.Queue, cfg.Log), api, server.CORSConfig{Origins: cfg.CORSOrigins, Dev: cfg.Dev})
	if err != nil {
		return nil, err
	}
	return &handler{handler: served, deps: d, metrics: m}, nil
}
