package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/photoapi"
)

// photo-api: PhotoService. On start it applies the migrations to the dev
// database, ensures the PhotoService-dev table, loads the demo data set
// (photoapi.SeedDemo: idempotent) and prints an organizer token with a few
// requests to try.
func init() {
	services = append(services, Service{
		Name:    "photo-api",
		Addr:    envOr("PACER_PHOTO_ADDR", photoapi.DefaultAddr),
		AddrVar: "PACER_PHOTO_ADDR",
		Run: func(ctx context.Context, env Env) error {
			// The settings the photo-api binary reads, then the dev stack's own.
			var cfg photoapi.Config
			if err := config.FromEnv("photo-api", cfg.Declare); err != nil {
				return err
			}
			// Originals: HMAC-signed, expiring links to the local folder,
			// with a key made for this run.
			secret := make([]byte, 32)
			if _, err := rand.Read(secret); err != nil {
				return err
			}
			images, stopCDN, err := serveCDN(demoImageDir, demoOriginalDir, secret)
			if err != nil {
				return err
			}
			defer stopCDN()
			// The dev stack creates its table (PACER_PHOTO_SETUP would say
			// so too, its endpoints being local), as the AsyncEvent services do.
			cfg.Listener, cfg.Stage, cfg.DatabaseURL, cfg.AWS, cfg.Setup, cfg.Dev, cfg.Log = env.Listener, "dev", env.DatabaseURL, &env.AWS, true, true, env.Log
			devLimits(&cfg.Limits.LimitSharing, os.Getenv)
			if cfg.ImageBaseURL == "" { // PACER_PHOTO_IMAGE_BASE_URL unset: the local CDN stand-in
				cfg.ImageBaseURL = images
			}
			if cfg.Bucket == "" { // PACER_PHOTO_BUCKET unset: originals from the local folder
				cfg.Originals = &photoapi.LocalOriginals{BaseURL: images + originalsPath, Key: secret}
			}
			cfg.Ready = func(ctx context.Context, base string, deps photoapi.Deps) error {
				defer env.Ready() // it serves; a demo-data failure is logged
				d, err := photoapi.SeedDemo(ctx, deps.Directory, deps.Ingest, deps.Timing)
				if err != nil {
					return fmt.Errorf("demo data: %w", err)
				}
				if err := photoapi.WriteDemoImages(demoImageDir, d.Keys); err != nil {
					return fmt.Errorf("demo images: %w", err)
				}
				if err := photoapi.WriteDemoOriginals(demoOriginalDir, d.RawKeys); err != nil {
					return fmt.Errorf("demo originals: %w", err)
				}
				fmt.Fprint(os.Stdout, photoDemoBanner(base, d))
				return nil
			}
			return photoapi.Run(ctx, cfg)
		},
	})
}

// demoImageDir holds the demo photos' generated previews, served by
// serveCDN as a stand-in for the CDN (the photo-api's image base URL);
// demoOriginalDir their originals, served only by signed link under
// originalsPath.
const (
	demoImageDir    = ".cache/dev/cdn"
	demoOriginalDir = ".cache/dev/originals"
	originalsPath   = "/originals"
)

// serveCDN serves dir on a free loopback port, as a CDN would serve the
// processed images, and the originals in originals under originalsPath
// by links signed with secret (photoapi.OriginalsHandler); it returns its
// base URL.
func serveCDN(dir, originals string, secret []byte) (string, func(), error) {
	for _, d := range []string{dir, originals} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", nil, err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("demo image server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", filesOnly(http.FileServer(http.Dir(dir)), dir))
	mux.Handle(originalsPath+"/", http.StripPrefix(originalsPath, photoapi.OriginalsHandler(originals, secret, nil)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }() // ends when closed
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

// filesOnly serves files through next, as a CDN does: GET and HEAD of
// a file; no folder listing (it would name every photo), 404 instead.
func filesOnly(next http.Handler, dir string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(path.Clean("/"+r.URL.Path))))
		if err != nil || fi.IsDir() {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// photoDemoBanner says how to try the photo API on the demo data.
func photoDemoBanner(base string, d photoapi.Demo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nphoto-api demo data: organizer %s, published event %s, photographers %s, %d photos.\n",
		d.Org, d.Event, strings.Join(d.Photographers, " and "), d.Photos)
	fmt.Fprintf(&b, "Organizer token (24 h):\n  export PACER_TOKEN=%s\n", d.Token)
	fmt.Fprintf(&b, "Try:\n")
	fmt.Fprintf(&b, "  curl -s %s/events/%s/bibs/%s/photos -H \"Authorization: Bearer $PACER_TOKEN\"\n", base, d.Event, d.Bibs[0])
	fmt.Fprintf(&b, "  curl -s '%s/photographers/%s/photos?eventId=%s&limit=5' -H \"Authorization: Bearer $PACER_TOKEN\"\n", base, d.Photographers[0], d.Event)
	fmt.Fprintf(&b, "  curl -s '%s/events/%s/photos?limit=5' -H \"Authorization: Bearer $PACER_TOKEN\"\n", base, d.Event)
	fmt.Fprintf(&b, "  curl -s '%s/events/%s/runners/search?name=%%EA%%B9%%80%%EB%%AF%%BC' -H \"Authorization: Bearer $PACER_TOKEN\"   # runners by name (김민)\n", base, d.Event)
	fmt.Fprintf(&b, "  curl -s %s/events/%s/photos/<ulid>/original -H \"Authorization: Bearer $PACER_TOKEN\"   # a signed, expiring link to the original\n", base, d.Event)
	fmt.Fprintf(&b, "  curl -s %s/public/events/%s/bibs/%s/photos            # runners: no token, published events only\n", base, d.Event, d.Bibs[1])
	fmt.Fprintf(&b, "  curl -s '%s/public/events/%s/bibs/%s/nearby-photos?window=60'  # photos taken when the runner passed each camera, by their split times\n", base, d.Event, d.Bibs[0])
	fmt.Fprintf(&b, "  curl -s %s/events/%s/photos -H 'X-Pacer-Dev-User: me' -H 'X-Pacer-Dev-Roles: organizer' -H 'X-Pacer-Dev-Org: %s'  # dev-mode impersonation\n", base, d.Event, d.Org)
	fmt.Fprintf(&b, "  API reference: %s/docs\n", base)
	fmt.Fprintf(&b, "Pages: runners %s/ui/?event=%s&bib=%s · organizers %s/ui/organizer.html?kind=bib&event=%s&term=%s\n\n", base, d.Event, d.Bibs[0], base, d.Event, d.Bibs[0])
	return b.String()
}
