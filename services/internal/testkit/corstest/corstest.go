// Package corstest checks that a served API answers the cross-origin
// calls of an allowed origin as server.CORS says: its preflight, the call
// itself, and another origin's preflight.
//
//	corstest.Check(t, baseURL, corstest.Call{Path: "/me/participations", Origin: "https://app.example.com",
//		Header: map[string]string{"Authorization": "Bearer " + tok}, Status: 200,
//		Methods: "GET, POST", Headers: "Authorization, Content-Type, If-None-Match"})
package corstest

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// Call is a cross-origin GET and what its preflight must allow.
type Call struct {
	// Path is the GET's path, Origin the allowed origin it comes from,
	// Header its own headers (its authentication), Status its answer's.
	Path, Origin string
	Header       map[string]string
	Status       int
	// Methods and Headers are the Access-Control-Allow-Methods and
	// -Headers the preflight must answer.
	Methods, Headers string
}

// Check fails t unless, at base: a preflight of c from c.Origin is a 204
// allowing c.Methods and c.Headers for 7200 s to c.Origin, with Vary:
// Origin; the GET itself answers c.Status to c.Origin, exposing ETag,
// Retry-After and Location; and the same preflight from another origin
// is a 403 without Access-Control-Allow-Origin.
func Check(t *testing.T, base string, c Call) {
	t.Helper()
	preflight := map[string]string{"Origin": c.Origin, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"}
	status, h := do(t, http.MethodOptions, base+c.Path, preflight)
	if status != http.StatusNoContent {
		t.Errorf("preflight of %s: %d, want 204", c.Path, status)
	}
	for k, v := range map[string]string{
		"Access-Control-Allow-Origin":  c.Origin,
		"Access-Control-Allow-Methods": c.Methods,
		"Access-Control-Allow-Headers": c.Headers,
		"Access-Control-Max-Age":       "7200",
		"Vary":                         "Origin",
	} {
		if got := h.Get(k); got != v {
			t.Errorf("preflight of %s: %s %q, want %q", c.Path, k, got, v)
		}
	}
	get := map[string]string{"Origin": c.Origin}
	for k, v := range c.Header {
		get[k] = v
	}
	status, h = do(t, http.MethodGet, base+c.Path, get)
	if status != c.Status || h.Get("Access-Control-Allow-Origin") != c.Origin || h.Get("Access-Control-Expose-Headers") != "ETag, Retry-After, Location" {
		t.Errorf("GET %s: %d, headers %v; want %d readable from %s", c.Path, status, h, c.Status, c.Origin)
	}
	preflight["Origin"] = "https://other.example.com"
	if status, h = do(t, http.MethodOptions, base+c.Path, preflight); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of %s from another origin: %d, headers %v; want 403 without CORS headers", c.Path, status, h)
	}
}

// do sends method url with header and returns the answer's status and
// headers.
func do(t *testing.T, method, url string, header map[string]string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}
