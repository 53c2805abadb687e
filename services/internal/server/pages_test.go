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

// A human check widget's origin may load its script, frame and calls;
// /ui/config.json names the script and site key. Without one, no frame may
// load. A widget script that is not an http(s) URL of a plain origin is
// refused.
func TestPagesHumanWidget(t *testing.T) {
	site := fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}
	mux := http.NewServeMux()
	w := &server.Widget{Script: "https://challenges.example.com/v0/api.js?render=explicit", SiteKey: "site-1"}
	if err := server.Pages(mux, server.PageConfig{Site: site, HumanWidget: w}); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, server.PagesPrefix+"config.json", nil))
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self' https://challenges.example.com;", "connect-src 'self' https://challenges.example.com;", "frame-src https://challenges.example.com;"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if body := rec.Body.String(); !strings.Contains(body, `"humanWidget":{"script":"https://challenges.example.com/v0/api.js?render=explicit","siteKey":"site-1"}`) {
		t.Errorf("config.json %s lacks the widget", body)
	}
	mux = http.NewServeMux()
	if err := server.Pages(mux, server.PageConfig{Site: site}); err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, server.PagesPrefix, nil))
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src 'none';") || strings.Contains(rec.Body.String(), "humanWidget") {
		t.Errorf("without a widget: CSP %q", csp)
	}
	for _, bad := range []string{"api.js", "javascript:alert(1)", "https://a.example;script-src */api.js", "https://*.example/api.js", "ftp://a.example/api.js"} {
		if err := server.Pages(http.NewServeMux(), server.PageConfig{Site: site, HumanWidget: &server.Widget{Script: bad}}); err == nil {
			t.Errorf("Pages took the widget script %q", bad)
		}
	}
}
