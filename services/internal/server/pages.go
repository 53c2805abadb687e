package server

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// shared holds what every service's pages use: pacer.js (sign-in, API
// calls with retries, DOM helpers that write text only) and style.css.
//
//go:embed web
var shared embed.FS

// PagesPrefix is where a service serves its browser pages. They are plain
// HTML, CSS and JavaScript modules (no build step), registered on the
// service's mux beside the API, and are not API operations: they are not
// in the OpenAPI spec.
const PagesPrefix = "/ui/"

// PageConfig configures a service's pages.
type PageConfig struct {
	// Site holds the service's own pages (index.html and the files it
	// links); a name in both Site and the shared files is served from the
	// shared ones.
	Site fs.FS
	// Dev offers the dev sign-in (a user/role/org picker that sends the
	// X-Pacer-Dev-* headers). Outside dev mode, the pages take a bearer
	// token from the embedding application (see pacer.js).
	Dev bool
	// ImageBaseURL, if set, is where the pages load photos from (the CDN
	// or bucket URL a processed key is appended to); the
	// Content-Security-Policy allows images from its origin.
	ImageBaseURL string
	// EmbedOrigins are the origins besides the service's own whose
	// windows may hand the pages a token by postMessage (outside dev
	// mode); /ui/config.json lists them.
	EmbedOrigins []string
}

// pageConfig is /ui/config.json, what the pages read first.
type pageConfig struct {
	Dev          bool     `json:"dev"`
	ImageBaseURL string   `json:"imageBaseUrl"`
	EmbedOrigins []string `json:"embedOrigins"`
}

// Pages serves cfg's pages under PagesPrefix on mux, each answer with a
// strict Content-Security-Policy (scripts, styles and API calls from the
// service itself only; images also from ImageBaseURL's origin; no inline
// script, so text a page shows can never run), plus /ui/config.json.
func Pages(mux *http.ServeMux, cfg PageConfig) error {
	imgSrc := "'self'"
	if cfg.ImageBaseURL != "" {
		u, err := url.Parse(cfg.ImageBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("server: pages: image base URL %q is not an absolute http(s) URL", cfg.ImageBaseURL)
		}
		imgSrc += " " + u.Scheme + "://" + u.Host
	}
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src " + imgSrc +
		"; connect-src 'self'; base-uri 'none'; form-action 'self'"
	conf, err := json.Marshal(pageConfig{Dev: cfg.Dev, ImageBaseURL: strings.TrimSuffix(cfg.ImageBaseURL, "/"), EmbedOrigins: append([]string{}, cfg.EmbedOrigins...)})
	if err != nil {
		return err
	}
	common, err := fs.Sub(shared, "web")
	if err != nil {
		return err
	}
	mux.Handle("GET "+strings.TrimSuffix(PagesPrefix, "/"), http.RedirectHandler(PagesPrefix, http.StatusMovedPermanently))
	mux.HandleFunc("GET "+PagesPrefix, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		name := strings.TrimPrefix(r.URL.Path, PagesPrefix)
		if name == "" {
			name = "index.html"
		}
		if name == "config.json" {
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(conf) // the client went away; nothing to do
			return
		}
		b, err := fs.ReadFile(common, name)
		if errors.Is(err, fs.ErrNotExist) {
			b, err = fs.ReadFile(cfg.Site, name)
		}
		if err != nil || !fs.ValidPath(name) {
			http.Error(w, "404 page not found", http.StatusNotFound) // the guard turns it into a problem
			return
		}
		http.ServeContent(w, r, path.Base(name), time.Time{}, bytes.NewReader(b))
	})
	return nil
}
