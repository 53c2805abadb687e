// Package server holds what Pacer's HTTP services share: the Huma API set-up
// (RFC 9457 problem+json errors clipped to a few KB, bearer security
// scheme, strict JSON bodies: UTF-8, no repeated or case-variant keys, at
// most MaxBodyDepth levels), JWT authentication middleware, the dev-only
// impersonation header, the /healthz liveness probe and the /readyz
// report of outside dependencies, cross-origin calls
// from listed origins (CORS), graceful serving, the `openapi` subcommand,
// and the route adapter Handle (who may call, then the route's work, its
// errors mapped). Each service maps its own domain errors to HTTP in one
// place (its errors.go: a table of ProblemTypes for Errors).
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/pacerhq/pacer/sdk/auth"
)

// BearerScheme is the name of the OpenAPI security scheme for JWTs.
const BearerScheme = "bearer"

// Bearer is the Security requirement for operations that need a token.
var Bearer = []map[string][]string{{BearerScheme: {}}}

// Public is the Security requirement of an operation that needs no token
// (one empty requirement: OpenAPI's way to say so, where an absent one
// means "not stated"). NewAPI gives it to every operation registered
// without a Security.
var Public = []map[string][]string{{}}

// NeedsToken reports whether op needs a bearer token: it names a security
// requirement, and none of them is empty.
func NeedsToken(op *huma.Operation) bool {
	for _, req := range op.Security {
		if len(req) == 0 {
			return false
		}
	}
	return len(op.Security) > 0
}

// strictCasing sets Huma's ValidateStrictCasing once: body keys are
// case-sensitive. encoding/json matches struct fields case-insensitively,
// so with Huma's default (case-insensitive validation) {"size":1,"SIZE":-5}
// validated "size" and decoded the unvalidated "SIZE" into the field; now
// "SIZE" is an unexpected property. Huma has the setting only process-wide:
// once NewAPI has run, it holds for every API of the process.
var strictCasing sync.Once

// NewAPI returns a Huma API on mux with Pacer's conventions: OpenAPI 3.1,
// a bearer JWT security scheme, operations without one stated as public
// (Public), every error status the server itself may answer documented
// (documentServerErrors), the local stack's address (server) as the
// spec's server, and (in dev mode) the documented impersonation headers.
// Every problem it answers is bounded (clipProblems) and its type told
// to the problems metric (noteProblem), and body keys are matched
// case-sensitively (strictCasing). It changes no other Huma
// default, and APIs may be built concurrently.
func NewAPI(mux *http.ServeMux, title, version, description, server string, dev bool) huma.API {
	strictCasing.Do(func() { huma.ValidateStrictCasing = true })
	cfg := huma.DefaultConfig(title, version)
	cfg.Transformers = []huma.Transformer{clipProblems, noteProblem} // before the $schema link Huma adds
	cfg.Info.License = &huma.License{Name: "Proprietary"}
	cfg.Servers = []*huma.Server{{URL: server, Description: "The local stack (`make run`). Deployed, the API is served at the root of its host."}}
	cfg.Formats = withStrictJSON(cfg.Formats)
	cfg.Info.Description = description + "\n\n" + strictJSONDescription + "\n\n" + errorsDescription
	if dev {
		cfg.Info.Description += "\n\n**Dev mode:** requests may set `" + DevUserHeader + "` (and optionally `" +
			DevRolesHeader + "`, `" + DevOrgHeader + "`) instead of a bearer token to act as that user. " +
			"These headers are ignored unless the service runs with dev mode on."
	}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		BearerScheme: {
			Type:         "http",
			Scheme:       "bearer",
			BearerFormat: "JWT",
			Description:  "A JWT whose `sub` is the user id; `roles` may hold \"admin\" or \"organizer\"; `org` names an organizer's org.",
		},
	}
	cfg.OnAddOperation = append(cfg.OnAddOperation, statePublic, documentServerErrors)
	return humago.New(mux, cfg)
}

// NewServiceAPI is a service's API: NewAPI's, its spec documenting the
// dev-mode headers (honoured only when dev is set), with the /healthz
// probe, the /readyz report (v's key set, then checks), the bounds b
// (Bound: deadlines and the in-flight bound, not on the probes),
// authentication by v (none when v is nil, as for writing the spec), then
// the routes register adds.
func NewServiceAPI(mux *http.ServeMux, title, version, description, server string, v *auth.Verifier, dev bool, b Bounds, register func(huma.API), checks ...Checker) huma.API {
	api := NewAPI(mux, title, version, description, server, true)
	RegisterHealth(api)
	RegisterReady(api, append([]Checker{KeySetCheck(v)}, checks...)...)
	Bound(api, b)
	if v != nil {
		// Middlewares apply to operations registered after them.
		Authenticate(api, v, dev)
	}
	register(api)
	return api
}

// Serve runs srv on l until ctx is cancelled, then shuts it down
// gracefully (in-flight requests get up to 10 s). It sets sane timeouts on
// srv if they are zero, and puts guard in front of srv.Handler: unclean
// paths (/events//x) get a 404 problem+json instead of ServeMux's HTML
// redirect, ServeMux's plain-text 404s and 405s become problem+json too,
// and the request's media type is matched case-insensitively. When
// srv.Handler is CORS's, guard goes just inside it (guarded). Requests
// net/http refuses before any handler runs (a malformed path or header,
// headers too large) get problem+json too (see problemListener).
func Serve(ctx context.Context, srv *http.Server, l net.Listener) error {
	if srv.ReadHeaderTimeout == 0 {
		srv.ReadHeaderTimeout = 5 * time.Second
	}
	if srv.ReadTimeout == 0 {
		srv.ReadTimeout = 30 * time.Second
	}
	if srv.WriteTimeout == 0 {
		srv.WriteTimeout = 30 * time.Second
	}
	if srv.IdleTimeout == 0 {
		srv.IdleTimeout = 120 * time.Second
	}
	srv.Handler = guarded(srv.Handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(problemListener{l}) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	slog.Info("server stopped", "addr", l.Addr().String())
	return nil
}

// ServeReady is Serve, which also calls ready (if not nil) once srv
// serves, with srv's base URL ("http://" + l's address) and d, the API's
// dependencies: the readiness hook of every service's Run. An error from
// ready is logged; srv keeps serving.
func ServeReady[D any](ctx context.Context, srv *http.Server, l net.Listener, log *slog.Logger,
	ready func(ctx context.Context, baseURL string, d D) error, d D) error {
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, srv, l) }()
	if ready != nil {
		if err := ready(ctx, "http://"+l.Addr().String(), d); err != nil {
			log.Error("server: the ready hook failed", "err", err)
		}
	}
	return <-served
}

// Listen opens a TCP listener, with an error that says what to do when the
// address is taken.
func Listen(addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: listen on %s: %w (is another instance running? choose another address)", addr, err)
	}
	return l, nil
}
