package asyncworker

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// DefaultOpsAddr is where the worker serves /metrics, /healthz and
// /readyz unless told otherwise.
const DefaultOpsAddr = "127.0.0.1:9091"

// readyTTL is how long a readiness result is reused: probes do not
// multiply AWS calls.
const readyTTL = 2 * time.Second

// ops is the worker's operations server: GET /metrics (the registry),
// /healthz (200 while the process runs) and /readyz (200 when the table
// and the queue answer, else 503 with the reason; checked at most every
// readyTTL) and, with pprof, Go's profiles at /debug/pprof/.
type ops struct {
	reg   *prometheus.Registry
	check func(ctx context.Context) error
	pprof bool

	mu  sync.Mutex
	at  time.Time
	err error
}

func (o *ops) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, metrics.Handler(o.reg))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := o.ready(r.Context()); err != nil {
			text(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		text(w, http.StatusOK, "ready")
	})
	if o.pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

func (o *ops) ready(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.at.IsZero() && time.Since(o.at) < readyTTL {
		return o.err
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	o.err, o.at = o.check(cctx), time.Now()
	return o.err
}

func text(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// serve runs the ops server on l until ctx ends.
func (o *ops) serve(ctx context.Context, l net.Listener, log *slog.Logger) {
	write := 30 * time.Second
	if o.pprof {
		write = 2 * time.Minute // a CPU profile's default length is 30 s
	}
	srv := &http.Server{Handler: o.handler(), ReadHeaderTimeout: 5 * time.Second, WriteTimeout: write}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed {
		log.Error("asyncevent-worker: ops server", "err", err)
	}
}
