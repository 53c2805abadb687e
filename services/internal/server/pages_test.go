package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pacerhq/pacer/services/internal/server"
)

// Only the service itself and the embed origins may frame the pages.
func TestPagesFrameAncestors(t *testing.T) {
	site := fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}
	for _, c := range []struct {
		embed    string
		ancestor string // the CSP's frame-ancestors
		xfo      string
	}{
		{"", "frame-ancestors 'self'", "SAMEORIGIN"},
		{"https://App.Example.com:443, http://127.0.0.1:8080/", "frame-ancestors 'self' https://app.example.com http://127.0.0.1:8080", ""},
	} {
		var embed server.Origins
		if err := embed.Set(c.embed); err != nil {
			t.Fatalf("%q: %v", c.embed, err)
		}
		mux := http.NewServeMux()
		if err := server.Pages(mux, server.PageConfig{Site: site, EmbedOrigins: embed}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{server.PagesPrefix, server.PagesPrefix + "config.json"} {
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
			csp := w.Header().Get("Content-Security-Policy")
			if w.Code != http.StatusOK || !strings.HasSuffix(csp, "; "+c.ancestor) || w.Header().Get("X-Frame-Options") != c.xfo {
				t.Errorf("embed %q, %s: %d, CSP %q, X-Frame-Options %q; want %q and %q", c.embed, path, w.Code, csp, w.Header().Get("X-Frame-Options"), c.ancestor, c.xfo)
			}
		}
	}
	for _, bad := range []string{"*", "https://*.example.com", "example.com", "javascript:alert(1)", "https://a.example/path",
		"https://a.example?x=1", "https://u@a.example", "https://a.example;script-src *", "ftp://a.example", "https://a.example 'unsafe-inline'", "https://bücher.example"} {
		var o server.Origins
		if err := o.Set(bad); err == nil {
			t.Errorf("embed origin %q accepted as %q", bad, o)
		}
		if err := server.Pages(http.NewServeMux(), server.PageConfig{Site: site, EmbedOrigins: server.Origins{bad}}); err == nil {
			t.Errorf("Pages took the embed origin %q", bad)
		}
	}
}
