package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/autoscale"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/services/dev/workerpool"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// autoscaleSettings are pacer-dev's autoscaler flags, once parsed (nil in
// tests: the environment's then).
var autoscaleSettings *workerpool.Settings

// runWorkers runs the AsyncEvent workers as separate asyncevent-worker
// processes (like ECS tasks), scaled on the queue's depth by
// autoscale.Controller, and serves the autoscaler's /metrics
// (pacer_workers_desired, pacer_workers_running, pacer_queue_messages) on
// env.Listener. Progress lines go to stdout. Without the worker binary it
// runs one worker in-process instead.
func runWorkers(ctx context.Context, env Env) error {
	var wcfg asynceventworker.Config
	if err := config.FromEnv("asyncevent-worker", wcfg.Declare); err != nil {
		return err
	}
	var st workerpool.Settings
	if autoscaleSettings != nil {
		st = *autoscaleSettings
	} else if err := config.FromEnv("pacer-dev", st.Declare); err != nil {
		return err
	}
	bin := st.WorkerBin
	if bin == "" {
		if self, err := os.Executable(); err == nil {
			bin = filepath.Join(filepath.Dir(self), "asyncevent-worker")
		}
	}
	if _, err := os.Stat(bin); bin == "" || err != nil {
		fmt.Fprintf(os.Stdout, "asyncevent-workers: no worker binary at %q (make run builds bin/asyncevent-worker); running one worker in-process, not autoscaled\n", bin)
		_ = env.Listener.Close()
		return runInProcessWorker(ctx, env)
	}
	cfg := st.Autoscale(wcfg.Concurrency)
	ctrl, err := autoscale.NewController(cfg, time.Now)
	if err != nil {
		return err
	}
	q, err := sqsqueue.Open(ctx, awsclient.SQS(env.AWS), sqsqueue.Config{Name: wcfg.Queue, MaxReceives: wcfg.MaxReceives, Ensure: true})
	if err != nil {
		return err
	}
	childEnv := []string{"PACER_ASYNCEVENT_SETUP=1"}
	if os.Getenv("PACER_WORKER_WAIT") == "" {
		// local-aws-sqs answers a long poll only when the batch is full or
		// the wait is over: keep the wait short locally.
		childEnv = append(childEnv, "PACER_WORKER_WAIT=1s")
	}
	if os.Getenv("PACER_WORKER_PPROF") == "" {
		// Profiles on the loopback ops port, for make load (docs/load.md).
		childEnv = append(childEnv, "PACER_WORKER_PPROF=true")
		wcfg.Pprof = true
	}
	pool := workerpool.New(workerpool.Config{Command: bin, Env: childEnv, StopTimeout: 12 * time.Second, Stderr: os.Stderr, Log: env.Log})
	defer pool.Close()

	reg := metrics.NewRegistry()
	asynceventbackend.NewQueueGauge(reg, q.Counts, env.Log)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /workers", workersHandler(pool))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(env.Listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			env.Log.Error("autoscaler metrics", "err", err)
		}
	}()
	defer srv.Close()
	env.advertise("asyncevent.workers", "http://"+env.Addr+"/workers")

	var once sync.Once
	a := &workerpool.Autoscaler{Pool: pool, Controller: ctrl, Interval: st.Interval, Metrics: workerpool.NewMetrics(reg), Out: os.Stdout, Log: env.Log,
		Read: func(ctx context.Context) (int, int, error) {
			main, _, err := q.Counts(ctx)
			return main.Visible + main.Delayed, main.InFlight, err
		},
		OnStep: func(s workerpool.Step) {
			once.Do(func() {
				fmt.Fprintf(os.Stdout, "asyncevent-workers: %d worker process(es) of %s, autoscaled %d..%d on backlog per worker (target %.0f = %s / %s × concurrency %d, scale-in window %s); autoscaler metrics http://%s/metrics\n",
					s.Running, bin, cfg.Min, cfg.Max, cfg.TargetBacklogPerWorker(), cfg.AcceptableLatency, cfg.ProcessingTime, cfg.Concurrency, cfg.ScaleInWindow, env.Addr)
				for _, p := range pool.Procs() {
					fmt.Fprintf(os.Stdout, "  worker pid %d ops: http://%s/metrics (and %s)\n", p.PID, p.OpsAddr, opsPaths(wcfg.Pprof))
				}
				env.Ready()
			})
		}}
	a.Run(ctx)
	return pool.Close()
}

// workerReport is one entry of GET /workers: a running worker process and
// its ops /metrics URL.
type workerReport struct {
	PID     int    `json:"pid"`
	Metrics string `json:"metrics"`
}

// workersHandler serves GET /workers: the pool's live worker processes,
// oldest first, as a JSON array of workerReport (the load tool sums their
// metrics).
func workersHandler(pool *workerpool.Pool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		out := []workerReport{}
		for _, p := range pool.Procs() {
			out = append(out, workerReport{PID: p.PID, Metrics: "http://" + p.OpsAddr + "/metrics"})
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(out)
	})
}

// runInProcessWorker runs one worker in this process.
func runInProcessWorker(ctx context.Context, env Env) error {
	var cfg asynceventworker.Config
	if err := config.FromEnv("asyncevent-worker", cfg.Declare); err != nil {
		return err
	}
	cfg.Setup, cfg.AWS, cfg.Log, cfg.Ready = true, &env.AWS, env.Log, env.Ready
	if os.Getenv("PACER_WORKER_WAIT") == "" {
		cfg.Wait = time.Second
	}
	if os.Getenv("PACER_WORKER_PPROF") == "" {
		cfg.Pprof = true
	}
	l, err := opsListener("PACER_WORKER_OPS_ADDR", cfg.OpsAddr)
	if err != nil {
		return err
	}
	cfg.OpsListener = l
	cfg.Ready = func() {
		fmt.Fprintf(os.Stdout, "asyncevent-worker ops: http://%s/metrics (and %s)\n", l.Addr(), opsPaths(cfg.Pprof))
		env.Ready()
	}
	return asynceventworker.Run(ctx, cfg)
}

// opsListener opens a background process's ops port in the stack: addr
// when the variable env is set, else a free loopback port, so that the
// stack never clashes with a process running outside.
func opsListener(env, addr string) (net.Listener, error) {
	if os.Getenv(env) == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ops port: %w (set %s)", err, env)
	}
	return l, nil
}

// opsPaths names a worker's ops paths besides /metrics, for the banner.
func opsPaths(pprof bool) string {
	if pprof {
		return "/healthz, /readyz, /debug/pprof/"
	}
	return "/healthz, /readyz"
}
