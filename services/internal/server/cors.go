package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// CORSConfig configures CORS.
type CORSConfig struct {
	// Origins are the origins whose pages may call the API (a front end
	// on another origin, with a bearer token: never with cookies, so no
	// credentials are allowed). None: no CORS headers at all, only the
	// API's own origin may read its answers.
	Origins Origins
	// Dev also allows the dev-mode impersonation headers (DevUserHeader,
	// DevRolesHeader, DevOrgHeader) in cross-origin calls.
	Dev bool
}

// DeclareCORSOrigins declares the cors-origins setting
// (PACER_CORS_ORIGINS) on s, stored in p: see CORSConfig.Origins. It is
// apart from the embed origins (DeclareEmbedOrigins), which may frame the
// pages.
func DeclareCORSOrigins(s *config.Set, p *Origins) {
	s.Var(p, "cors-origins", "PACER_CORS_ORIGINS", "",
		"origins (comma-separated scheme://host[:port]) of the web applications whose pages may call the API with a bearer token (CORS; apart from PACER_EMBED_ORIGINS); empty: the API's own origin only")
}

// Cross-origin answers' fixed headers.
const (
	// corsMaxAge is how long a browser may reuse a preflight's answer, in
	// seconds: Chromium's cap (2 h).
	corsMaxAge = "7200"
	// corsExposed are the answer headers, besides the CORS-safelisted
	// ones (Content-Type, Cache-Control, ...), a front end may read: the
	// ETag to send back as If-None-Match, Retry-After of a 429, a 503 or
	// a poll, and a created resource's Location.
	corsExposed = "ETag, Retry-After, Location"
)

// cors is the handler CORS returns: next, answering cross-origin calls.
type cors struct {
	allowed map[string]bool // origins, as parseOrigin writes them
	methods string          // Access-Control-Allow-Methods
	headers string          // Access-Control-Allow-Headers
	next    http.Handler
}

// CORS returns next answering cross-origin calls from cfg.Origins to
// api's operations, or next itself when cfg names no origin. For every
// path but the pages (PagesPrefix) and metrics.Path, which no other
// origin's script needs:
//
//   - every answer has Vary: Origin, whoever asks, so that no cache
//     gives one origin's answer to another;
//   - an answer to an allowed origin (one Origin header, matched as a
//     browser writes it: scheme and host lower-case, no default port)
//     names it in Access-Control-Allow-Origin (never "*", never with
//     credentials) and exposes corsExposed, errors included: a front
//     end reads a 401, a 429's Retry-After, a problem's detail;
//   - a preflight (OPTIONS with Origin and Access-Control-Request-Method)
//     is answered here, never reaching authentication, rate limits or
//     the routes: from an allowed origin 204 with the methods api's
//     operations use, the request headers they read (Authorization,
//     Content-Type, their header parameters, and in dev mode the dev
//     headers) and Access-Control-Max-Age corsMaxAge; from any other
//     origin (or "null") a 403 problem+json without CORS headers, which
//     the browser reports as a CORS failure, and a network log as a
//     refusal rather than a success.
//
// CORS itself refuses no actual request: a script on another origin
// cannot read the answer, and the bearer token is what authorizes. Serve
// puts its guard just inside the handler CORS returns, so guard's own
// refusals carry the CORS headers too. Wrapped around an API's timed
// handler, as the services do, preflights are not timed. Build it once
// api's operations are registered.
func CORS(next http.Handler, api huma.API, cfg CORSConfig) (http.Handler, error) {
	if len(cfg.Origins) == 0 {
		return next, nil
	}
	c := &cors{allowed: map[string]bool{}, next: next}
	for _, o := range cfg.Origins {
		origin, err := parseOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("server: cors origin: %w", err)
		}
		c.allowed[origin] = true
	}
	c.methods, c.headers = corsAllowed(api.OpenAPI(), cfg.Dev)
	return c, nil
}

// corsAllowed lists the methods of o's operations and the request headers
// they read (Authorization, Content-Type, their header parameters, and
// with dev the dev headers), as a preflight's answer names them.
func corsAllowed(o *huma.OpenAPI, dev bool) (methods, headers string) {
	order := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	var ms, params []string
	for _, item := range o.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			ms = append(ms, op.Method)
			for _, p := range op.Parameters {
				if p.In == "header" {
					params = append(params, http.CanonicalHeaderKey(p.Name))
				}
			}
		}
	}
	slices.SortFunc(ms, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	slices.Sort(params)
	hs := []string{"Authorization", "Content-Type"}
	for _, p := range slices.Compact(params) {
		if !slices.Contains(hs, p) {
			hs = append(hs, p)
		}
	}
	if dev {
		hs = append(hs, DevUserHeader, DevRolesHeader, DevOrgHeader)
	}
	return strings.Join(slices.Compact(ms), ", "), strings.Join(hs, ", ")
}

func (c *cors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p == strings.TrimSuffix(PagesPrefix, "/") || strings.HasPrefix(p, PagesPrefix) || p == metrics.Path {
		c.next.ServeHTTP(w, r)
		return
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	origin, allowed := c.origin(r)
	if r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != "" {
		if !allowed {
			writeProblem(w, r, http.StatusForbidden, "this origin may not call the API from its pages: it is not one of the API's CORS origins (PACER_CORS_ORIGINS)")
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", c.methods)
		h.Set("Access-Control-Allow-Headers", c.headers)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if allowed {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", corsExposed)
	}
	c.next.ServeHTTP(w, r)
}

// origin returns r's origin as parseOrigin writes it, and whether it is
// allowed: r has exactly one Origin header, naming an allowed origin.
func (c *cors) origin(r *http.Request) (string, bool) {
	v := r.Header.Values("Origin")
	if len(v) != 1 {
		return "", false
	}
	origin, err := parseOrigin(v[0])
	return origin, err == nil && c.allowed[origin]
}

// guarded is h behind guard, or, when h is CORS's handler, its next
// behind guard, CORS staying in front: guard's own refusals (an unclean
// path, a needless escape) then carry the CORS headers, which a front
// end needs to read them.
func guarded(h http.Handler) http.Handler {
	if c, ok := h.(*cors); ok {
		inner := *c
		inner.next = guard(c.next)
		return &inner
	}
	return guard(h)
}
