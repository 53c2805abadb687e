package server

import (
	"bytes"
	"cmp"
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
	"unicode"

	"github.com/pacerhq/pacer/services/internal/config"
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
	// EmbedOrigins are the origins besides the service's own that may
	// frame the pages (the Content-Security-Policy's frame-ancestors) and
	// whose windows may hand them a token by postMessage (outside dev
	// mode); /ui/config.json lists them. None by default: only the
	// service's own origin may frame its pages.
	EmbedOrigins Origins
	// HumanWidget, if set, is the challenge provider's widget the pages
	// show where an operation asks for a human check: /ui/config.json
	// gives its script and site key, and the Content-Security-Policy
	// allows the script's origin (its script, its frame and its calls).
	HumanWidget *Widget
}

// Widget is a third-party widget the pages load: its script's URL
// (absolute https, or http on loopback for tests) and its site key.
type Widget struct {
	Script  string `json:"script"`
	SiteKey string `json:"siteKey"`
}

// Origins is a list of web origins (scheme://host[:port]), set from a
// comma-separated list; each must be an http or https origin with no
// path, query, fragment or user info.
type Origins []string

// String lists o comma-separated.
func (o *Origins) String() string { return strings.Join(*o, ",") }

// Set parses a comma-separated list of origins (empty: none), lower-case.
func (o *Origins) Set(v string) error {
	var out Origins
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		origin, err := parseOrigin(s)
		if err != nil {
			return err
		}
		out = append(out, origin)
	}
	*o = out
	return nil
}

// parseOrigin returns s as an origin, scheme and host lower-case, or an
// error saying what is wrong with it.
func parseOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(u.Host, "*;, '\"") {
		return "", fmt.Errorf("server: %q is not a web origin: want scheme://host[:port], http or https, with nothing after the host", s)
	}
	for _, r := range u.Host {
		if r > unicode.MaxASCII {
			return "", fmt.Errorf("server: %q is not an ASCII origin: write an international domain name as the browser sends it (punycode, xn--…)", s)
		}
	}
	host := u.Host
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		host = strings.TrimSuffix(host, ":"+p) // as a browser writes the origin
	}
	return strings.ToLower(u.Scheme + "://" + host), nil
}

// DeclareEmbedOrigins declares the embed-origins setting
// (PACER_EMBED_ORIGINS) on s, stored in p: see PageConfig.EmbedOrigins.
func DeclareEmbedOrigins(s *config.Set, p *Origins) {
	s.Var(p, "embed-origins", "PACER_EMBED_ORIGINS", "",
		"origins (comma-separated scheme://host[:port]) of the applications that may frame the pages and hand them a token; empty: the service's own only")
}

// pageConfig is /ui/config.json, what the pages read first.
type pageConfig struct {
	Dev          bool     `json:"dev"`
	ImageBaseURL string   `json:"imageBaseUrl"`
	EmbedOrigins []string `json:"embedOrigins"`
	HumanWidget  *Widget  `json:"humanWidget,omitempty"`
}

// Pages serves cfg's pages under PagesPrefix on mux, each answer with a
// strict Content-Security-Policy (scripts, styles and API calls from the
// service itself only; images also from ImageBaseURL's origin; no inline
// script, so text a page shows can never run; framed only by the service
// itself and EmbedOrigins, so no other site can frame a button to
// clickjack it), plus /ui/config.json.
func Pages(mux *http.ServeMux, cfg PageConfig) error {
	imgSrc := "'self'"
	if cfg.ImageBaseURL != "" {
		u, err := url.Parse(cfg.ImageBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("server: pages: image base URL %q is not an absolute http(s) URL", cfg.ImageBaseURL)
		}
		imgSrc += " " + u.Scheme + "://" + u.Host
	}
	frameAncestors, embedders := "'self'", []string{}
	for _, o := range cfg.EmbedOrigins {
		origin, err := parseOrigin(o)
		if err != nil {
			return fmt.Errorf("server: pages: embed origin: %w", err)
		}
		frameAncestors += " " + origin
		embedders = append(embedders, origin)
	}
	widget := ""
	if w := cfg.HumanWidget; w != nil {
		u, err := url.Parse(w.Script)
		if err != nil {
			return fmt.Errorf("server: pages: widget script: %w", err)
		}
		origin, err := parseOrigin(u.Scheme + "://" + u.Host)
		if err != nil {
			return fmt.Errorf("server: pages: widget script %q: %w", w.Script, err)
		}
		widget = " " + origin
	}
	csp := "default-src 'none'; script-src 'self'" + widget + "; style-src 'self'; img-src " + imgSrc +
		"; connect-src 'self'" + widget + "; frame-src" + cmp.Or(widget, " 'none'") + "; base-uri 'none'; form-action 'self'; frame-ancestors " + frameAncestors
	conf, err := json.Marshal(pageConfig{Dev: cfg.Dev, ImageBaseURL: strings.TrimSuffix(cfg.ImageBaseURL, "/"), EmbedOrigins: embedders, HumanWidget: cfg.HumanWidget})
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
		if len(cfg.EmbedOrigins) == 0 {
			h.Set("X-Frame-Options", "SAMEORIGIN") // for browsers without frame-ancestors
		}
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
