package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// serveCORS serves, through Serve, an API set up as the services set
// theirs up (authentication, a rate limit, pages, /metrics on the same
// mux) behind CORS for origins, and returns its base URL. Its operations:
// GET /items/{id} (public; reads If-None-Match, answers an ETag), PUT
// and DELETE /items/{id}, GET /secret (needs a token), GET /limited (one
// call a minute per address), GET /down (503).
func serveCORS(t *testing.T, origins string, dev bool) string {
	t.Helper()
	mux := http.NewServeMux()
	api := server.NewAPI(mux, "t", "1", "", "http://127.0.0.1:8080", false)
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: []byte("cors-test-secret-at-least-32-bytes-long")})
	if err != nil {
		t.Fatal(err)
	}
	server.Authenticate(api, v, dev)
	limits, err := server.LimitSettings{PollAddress: "1/m", LimitSharing: server.LimitSharing{Replicas: 1}}.Limits(nil)
	if err != nil {
		t.Fatal(err)
	}
	server.RateLimit(api, limits, map[string]string{"limited": "poll"})
	type item struct {
		ETag string `header:"ETag"`
		Body struct {
			ID string `json:"id"`
		}
	}
	huma.Register(api, huma.Operation{OperationID: "get-item", Method: http.MethodGet, Path: "/items/{id}"},
		func(_ context.Context, in *struct {
			ID          string `path:"id"`
			IfNoneMatch string `header:"If-None-Match"`
		}) (*item, error) {
			out := &item{ETag: `"v1"`}
			out.Body.ID = in.ID
			return out, nil
		})
	for _, m := range []string{http.MethodPut, http.MethodDelete} {
		huma.Register(api, huma.Operation{OperationID: strings.ToLower(m) + "-item", Method: m, Path: "/items/{id}", Security: server.Bearer},
			func(context.Context, *struct {
				ID string `path:"id"`
			}) (*struct{}, error) {
				return nil, nil
			})
	}
	huma.Register(api, huma.Operation{OperationID: "secret", Method: http.MethodGet, Path: "/secret", Security: server.Bearer},
		func(context.Context, *struct{}) (*struct{}, error) { return nil, nil })
	huma.Register(api, huma.Operation{OperationID: "limited", Method: http.MethodGet, Path: "/limited"},
		func(context.Context, *struct{}) (*struct{}, error) { return nil, nil })
	huma.Register(api, huma.Operation{OperationID: "down", Method: http.MethodGet, Path: "/down"},
		func(context.Context, *struct{}) (*struct{}, error) {
			return nil, huma.Error503ServiceUnavailable("the table is unavailable")
		})
	if err := server.Pages(mux, server.PageConfig{Site: fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}}); err != nil {
		t.Fatal(err)
	}
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "up 1\n") })
	var o server.Origins
	if err := o.Set(origins); err != nil {
		t.Fatal(err)
	}
	h, err := server.CORS(mux, api, server.CORSConfig{Origins: o, Dev: dev})
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + serve(t, h)
}

// corsDo sends method path to base with the headers (name, value, ...:
// a name may repeat) and returns the answer's status and headers; it
// follows no redirect.
func corsDo(t *testing.T, base, method, path string, headers ...string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// Cross-origin calls from the listed origins, and only from them, get the
// CORS headers, on every answer of the API (errors included) and on no
// page or /metrics; preflights are answered before authentication, rate
// limits and the routes.
func TestCORS(t *testing.T) {
	t.Parallel()
	const (
		app   = "https://app.example.com"
		local = "http://localhost:5173"
		// What the allowed preflights allow: the methods the API's
		// operations use, the headers they read.
		methods    = "GET, PUT, DELETE"
		headers    = "Authorization, Content-Type, If-None-Match"
		devHeaders = headers + ", X-Pacer-Dev-User, X-Pacer-Dev-Roles, X-Pacer-Dev-Org"
	)
	bases := map[bool]string{ // by dev
		false: serveCORS(t, "https://App.Example.com:443, "+local+"/", false),
		true:  serveCORS(t, app, true),
	}
	preflight := func(origin, method string) []string {
		return []string{"Origin", origin, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", "authorization"}
	}
	for _, c := range []struct {
		name         string
		dev          bool
		method, path string
		headers      []string
		status       int
		allowOrigin  string // Access-Control-Allow-Origin; "" for none
		vary         bool   // Vary: Origin
		preflight    bool   // a preflight's answer: the allowed methods and headers, the max age
		allowHeaders string // when preflight: want Access-Control-Allow-Headers
	}{
		{name: "allowed origin", method: "GET", path: "/items/a", headers: []string{"Origin", app}, status: 200, allowOrigin: app, vary: true},
		{name: "allowed origin with its default port", method: "GET", path: "/items/a", headers: []string{"Origin", app + ":443"}, status: 200, allowOrigin: app, vary: true},
		{name: "allowed origin in capitals", method: "GET", path: "/items/a", headers: []string{"Origin", "HTTPS://APP.Example.COM"}, status: 200, allowOrigin: app, vary: true},
		{name: "second allowed origin", method: "GET", path: "/items/a", headers: []string{"Origin", local}, status: 200, allowOrigin: local, vary: true},
		{name: "allowed host, other port", method: "GET", path: "/items/a", headers: []string{"Origin", "http://localhost:5174"}, status: 200, vary: true},
		{name: "allowed host, other scheme", method: "GET", path: "/items/a", headers: []string{"Origin", "http://app.example.com"}, status: 200, vary: true},
		{name: "a subdomain of an allowed host", method: "GET", path: "/items/a", headers: []string{"Origin", "https://evil.app.example.com"}, status: 200, vary: true},
		{name: "other origin", method: "GET", path: "/items/a", headers: []string{"Origin", "https://evil.example"}, status: 200, vary: true},
		{name: "null origin", method: "GET", path: "/items/a", headers: []string{"Origin", "null"}, status: 200, vary: true},
		{name: "two origins", method: "GET", path: "/items/a", headers: []string{"Origin", app, "Origin", app}, status: 200, vary: true},
		{name: "no origin", method: "GET", path: "/items/a", status: 200, vary: true},

		{name: "preflight from an allowed origin", method: "OPTIONS", path: "/items/a", headers: preflight(app, "PUT"), status: 204, allowOrigin: app, vary: true, preflight: true, allowHeaders: headers},
		{name: "preflight of an operation needing a token", method: "OPTIONS", path: "/secret", headers: preflight(local, "GET"), status: 204, allowOrigin: local, vary: true, preflight: true, allowHeaders: headers},
		{name: "preflight of a rate-limited operation", method: "OPTIONS", path: "/limited", headers: preflight(app, "GET"), status: 204, allowOrigin: app, vary: true, preflight: true, allowHeaders: headers},
		{name: "preflight of no route", method: "OPTIONS", path: "/nope", headers: preflight(app, "GET"), status: 204, allowOrigin: app, vary: true, preflight: true, allowHeaders: headers},
		{name: "preflight in dev mode", dev: true, method: "OPTIONS", path: "/items/a", headers: preflight(app, "DELETE"), status: 204, allowOrigin: app, vary: true, preflight: true, allowHeaders: devHeaders},
		{name: "preflight from another origin", method: "OPTIONS", path: "/items/a", headers: preflight("https://evil.example", "PUT"), status: 403, vary: true},
		{name: "preflight from null", method: "OPTIONS", path: "/items/a", headers: preflight("null", "PUT"), status: 403, vary: true},
		{name: "OPTIONS, not a preflight", method: "OPTIONS", path: "/items/a", headers: []string{"Origin", app}, status: 405, allowOrigin: app, vary: true},

		{name: "401", method: "GET", path: "/secret", headers: []string{"Origin", app}, status: 401, allowOrigin: app, vary: true},
		{name: "dev header", dev: true, method: "GET", path: "/secret", headers: []string{"Origin", app, server.DevUserHeader, "u1"}, status: 204, allowOrigin: app, vary: true},
		{name: "404 of a route", method: "GET", path: "/nope", headers: []string{"Origin", app}, status: 404, allowOrigin: app, vary: true},
		{name: "405", method: "POST", path: "/items/a", headers: []string{"Origin", app}, status: 405, allowOrigin: app, vary: true},
		{name: "503", method: "GET", path: "/down", headers: []string{"Origin", app}, status: 503, allowOrigin: app, vary: true},
		{name: "guard's 404 (an empty segment)", method: "GET", path: "/items//a", headers: []string{"Origin", app}, status: 404, allowOrigin: app, vary: true},
		{name: "guard's 400 (a needless escape)", method: "GET", path: "/%69tems/a", headers: []string{"Origin", app}, status: 400, allowOrigin: app, vary: true},

		{name: "a page", method: "GET", path: "/ui/", headers: []string{"Origin", app}, status: 200},
		{name: "the pages' redirect", method: "GET", path: "/ui", headers: []string{"Origin", app}, status: 301},
		{name: "/metrics", method: "GET", path: "/metrics", headers: []string{"Origin", app}, status: 200},
		{name: "preflight of /metrics", method: "OPTIONS", path: "/metrics", headers: preflight(app, "GET"), status: 405},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status, h := corsDo(t, bases[c.dev], c.method, c.path, c.headers...)
			if status != c.status {
				t.Errorf("status %d, want %d", status, c.status)
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != c.allowOrigin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, c.allowOrigin)
			}
			if got := strings.Join(h.Values("Vary"), ", "); strings.Contains(got, "Origin") != c.vary {
				t.Errorf("Vary %q, want Origin in it: %v", got, c.vary)
			}
			if got := h.Get("Access-Control-Allow-Credentials"); got != "" {
				t.Errorf("Access-Control-Allow-Credentials %q: credentials are never allowed", got)
			}
			wantExposed := ""
			if c.allowOrigin != "" && !c.preflight {
				wantExposed = "ETag, Retry-After, Location"
			}
			if got := h.Get("Access-Control-Expose-Headers"); got != wantExposed {
				t.Errorf("Access-Control-Expose-Headers %q, want %q", got, wantExposed)
			}
			want := map[string]string{"Access-Control-Allow-Methods": "", "Access-Control-Allow-Headers": "", "Access-Control-Max-Age": ""}
			if c.preflight {
				want = map[string]string{"Access-Control-Allow-Methods": methods, "Access-Control-Allow-Headers": c.allowHeaders, "Access-Control-Max-Age": "7200"}
			}
			for k, v := range want {
				if got := h.Get(k); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
		})
	}
}

// A rate limit's 429 carries the CORS headers: a front end reads its
// Retry-After.
func TestCORSRateLimited(t *testing.T) {
	t.Parallel()
	const app = "https://app.example.com"
	base := serveCORS(t, app, false)
	if status, _ := corsDo(t, base, "GET", "/limited", "Origin", app); status != http.StatusNoContent {
		t.Fatalf("first call: %d", status)
	}
	status, h := corsDo(t, base, "GET", "/limited", "Origin", app)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" ||
		h.Get("Access-Control-Allow-Origin") != app || h.Get("Access-Control-Expose-Headers") != "ETag, Retry-After, Location" {
		t.Fatalf("second call: %d, headers %v; want a 429 whose Retry-After the origin may read", status, h)
	}
}

// Without origins CORS adds nothing; an origin that is not one is an
// error.
func TestCORSConfig(t *testing.T) {
	mux := http.NewServeMux()
	api := server.NewAPI(mux, "t", "1", "", "http://127.0.0.1:8080", false)
	if h, err := server.CORS(mux, api, server.CORSConfig{}); err != nil || h != http.Handler(mux) {
		t.Errorf("no origins: %v, %T; want the handler itself", err, h)
	}
	for _, o := range []string{"*", "null", "https://*.example.com", "https://app.example.com/path", "app.example.com"} {
		if _, err := server.CORS(mux, api, server.CORSConfig{Origins: server.Origins{o}}); err == nil {
			t.Errorf("%q: no error", o)
		}
	}
}
