// Package ops serves a background process's operations endpoints (the
// asyncevent worker's and the analytics publisher's): GET /metrics (a
// Prometheus registry), /healthz (200 while the process runs), /readyz
// (200 when its dependencies answer, else 503 with the reason; checked at
// most every ReadyTTL, so that probes do not multiply AWS calls) and, with
// Pprof, Go's profiles at /debug/pprof/. The HTTP APIs serve theirs
// beside their routes (services/internal/server).
package ops

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// ReadyTTL is how long a readiness result is reused.
const ReadyTTL = 2 * time.Second

// Server is one process's operations server.
type Server struct {
	// Name names the process in logs (e.g. asyncevent-worker).
	Name string
	// Registry is served at /metrics.
	Registry *prometheus.Registry
	// Ready checks the process's dependencies for /readyz (nil: ready
	// while alive).
	Ready func(ctx context.Context) error
	// Pprof also serves Go's profiles at /debug/pprof/. Off by default: a
	// profile costs CPU while it runs and shows the program's internals,
	// so turn it on only where operators alone reach the port.
	Pprof bool

	mu  sync.Mutex
	at  time.Time
	err error
}

// Handler returns the endpoints' handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, metrics.Handler(s.Registry))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.ready(r.Context()); err != nil {
			text(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		text(w, http.StatusOK, "ready")
	})
	if s.Pprof {
		Pprof(mux)
	}
	return mux
}

// Pprof serves Go's profiles at /debug/pprof/ on mux (go tool pprof
// URL/debug/pprof/profile). Only where operators alone reach the port.
func Pprof(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

func (s *Server) ready(ctx context.Context) error {
	if s.Ready == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.at.IsZero() && time.Since(s.at) < ReadyTTL {
		return s.err
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s.err, s.at = s.Ready(cctx), time.Now()
	return s.err
}

func text(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// Start serves the endpoints on l, or on a listener it opens on addr when l
// is nil, until ctx ends; the returned channel is closed once the server
// has stopped. With neither (addr empty) it serves nothing and returns a
// closed channel. flag names the setting that chose addr, for the error.
func (s *Server) Start(ctx context.Context, l net.Listener, addr, flag string, log *slog.Logger) (<-chan struct{}, error) {
	done := make(chan struct{})
	if l == nil && addr == "" {
		close(done)
		return done, nil
	}
	if l == nil {
		var err error
		if l, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("%s: ops server: %w (choose another %s, or empty to turn it off)", s.Name, err, flag)
		}
	}
	paths := "/metrics /healthz /readyz"
	if s.Pprof {
		paths += " /debug/pprof/"
	}
	log.Info(s.Name+" ops", "addr", l.Addr().String(), "paths", paths)
	write := 30 * time.Second
	if s.Pprof {
		write = 2 * time.Minute // a CPU profile's default length is 30 s
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, WriteTimeout: write}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
			log.Error(s.Name+": ops server", "err", err)
		}
	}()
	return done, nil
}
