// Package asynceventworker runs AsyncEvent workers: the consumer runtime
// (sdk/consumer) reading the participation queue and the
// domain's Process deciding each message. services/asyncevent-worker and
// the dev runner both call Run.
//
// Settings come from flags or PACER_* variables (Config.Declare; `-h` and
// docs/settings.md list them).
//
// The sweep (asyncevent.Operations.SweepStranded) re-enqueues requests left
// RECEIVED by an ingest that died between its two writes, so that nothing
// is stranded even if nobody reads the request. It reads the pending index
// (GSI3) with one Query per shard and UTC day of the last 24 hours
// (asyncevent.OperationsConfig.SweepLookback), 32 or 48 small Queries that
// cost the same whatever the table holds, so every worker can sweep once per
// interval (the first at a random point of the first interval, then
// jittered by up to a fifth, so that workers do not sweep together). It
// never re-queues FAILED_INGEST_ENQUEUE requests: that stays an
// operator's call. After each sweep the worker also runs the lock jobs of
// events an admin closed early (asyncevent.Operations.ExpireLocks), one
// worker per job by lease.
//
// Each worker also runs the arrival allocator (asyncevent.Allocator.Run)
// of the arrival-ordered FIRST_COME events it sees candidates of; a lease
// on the event makes one worker allocate an event at a time.
//
// A worker builds only its process's roles (asynceventbackend.OpenWorker):
// the Worker, its Allocator and Operations; not the API's Ingest, Query or
// Admin.
//
// Against local-aws-sqs use a short wait (e.g. 1s): it answers a long poll
// only when the batch is full or the wait has passed, whereas SQS answers
// as soon as a message is available.
package asynceventworker

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/pacerhq/pacer/sdk/autoscale"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/ops"
)

// Config configures Run.
type Config struct {
	// Config says where the data lives (table, queues, clients) and holds
	// the logger.
	asynceventbackend.Config

	Concurrency int
	Batch       int
	Visibility  time.Duration
	Wait        time.Duration
	// SweepEvery is how often to sweep for stranded requests (0: never).
	SweepEvery time.Duration

	// OpsAddr is where /metrics, /healthz and /readyz are served ("": no
	// ops server); OpsListener, if set, is used instead (Run closes it).
	OpsAddr     string
	OpsListener net.Listener
	// Pprof also serves Go's profiles at /debug/pprof/ on the ops port.
	// Off by default: a profile costs CPU while it runs and shows the
	// program's internals, so turn it on only where operators alone reach
	// the port (make run does, on loopback).
	Pprof bool

	// Ready, if set, is called once the table and queue are open and the
	// worker starts receiving.
	Ready func()
}

// Declare declares the worker's settings, and the backend's, on s.
func (cfg *Config) Declare(s *config.Set) {
	cfg.Config.Declare(s)
	metrics.DeclareConsumedCapacity(s, &cfg.ConsumedCapacity)
	s.Int(&cfg.Concurrency, "concurrency", "PACER_WORKER_CONCURRENCY", 10, "messages handled at once")
	s.Int(&cfg.Batch, "batch", "PACER_WORKER_BATCH", 10, "messages per receive, 1..10")
	s.Duration(&cfg.Visibility, "visibility", "PACER_WORKER_VISIBILITY", 30*time.Second, "visibility timeout of a received message")
	s.Duration(&cfg.Wait, "wait", "PACER_WORKER_WAIT", 10*time.Second, "long-poll wait, up to 20s")
	s.String(&cfg.OpsAddr, "ops-addr", "PACER_WORKER_OPS_ADDR", DefaultOpsAddr, "where /metrics, /healthz and /readyz are served; -ops-addr= (empty) turns it off")
	s.Bool(&cfg.Pprof, "pprof", "PACER_WORKER_PPROF", false, "also serve Go's profiles at /debug/pprof/ on the ops port (only where operators alone reach it)")
	s.String(&cfg.WorkerID, "worker-id", "PACER_WORKER_ID", "", "this worker's id, recorded on the requests it moves (workerId) and in the analytics events; empty: <hostname>-<pid>")
	s.Int(&cfg.CandidateWaits, "candidate-waits", "PACER_WORKER_CANDIDATE_WAITS", 10, "how many times an arrival candidate's message is continued (acked and sent again, delayed) while its request waits for the allocator, before its receives count toward the DLQ; -1: never")
	s.Duration(&cfg.SweepEvery, "sweep-every", "PACER_WORKER_SWEEP_EVERY", 10*time.Minute, "how often this worker sweeps for requests stranded in RECEIVED and runs the lock jobs of events closed early; 0 turns both off")
}

// DefaultWorkerID is the worker id when PACER_WORKER_ID is not set:
// <hostname>-<pid>, unique among the processes running at one time (an ECS
// task's hostname is its own).
func DefaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "worker"
	}
	return host + "-" + strconv.Itoa(os.Getpid())
}

// openRoles loads cfg's AWS configuration, wires the worker's metrics
// into it (wm hears the decisions, am the AWS calls) and builds the worker
// process's roles: Run and the cost benchmark (cost_bench_test.go) share
// it, so the benchmark measures what production runs.
func openRoles(ctx context.Context, cfg *Config, wm *asynceventbackend.WorkerMetrics, am *metrics.AWS) (*asynceventbackend.WorkerRoles, error) {
	if err := cfg.LoadAWS(ctx); err != nil {
		return nil, err
	}
	if cfg.AWS != nil {
		am.Attach(cfg.AWS)
	}
	if cfg.ConsumedCapacity {
		cfg.DDBObserver = am
	}
	cfg.Decisions = decisions{wm}
	return asynceventbackend.OpenWorker(ctx, cfg.Config)
}

// DefaultOpsAddr is where the worker serves /metrics, /healthz and
// /readyz unless told otherwise.
const DefaultOpsAddr = "127.0.0.1:9091"

// Run consumes the queue until ctx is cancelled, then stops receiving,
// finishes the messages in flight, deletes them, and returns. Unless
// OpsAddr is empty it also serves the ops endpoints there (see
// docs/metrics.md for the metrics).
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	log := cfg.Log
	if cfg.WorkerID == "" {
		cfg.WorkerID = DefaultWorkerID()
	}
	if cfg.Batch > 10 {
		return fmt.Errorf("asynceventworker: batch %d: SQS receives at most 10", cfg.Batch)
	}
	reg := metrics.NewRegistry()
	wm := asynceventbackend.NewWorkerMetrics(reg, cfg.Concurrency)
	am := metrics.NewAWS(reg, cfg.Table)
	stopEMF, err := cfg.EMF.Start(reg, log)
	if err != nil {
		return err
	}
	// After the consumer: the last lines count the messages it finished
	// while stopping.
	defer stopEMF()
	roles, err := openRoles(ctx, &cfg, wm, am)
	if err != nil {
		if cfg.OpsListener != nil {
			_ = cfg.OpsListener.Close()
		}
		return err
	}
	asynceventbackend.NewUnsureWrites(reg, roles.Worker.QueuedAtUnsure)
	asynceventbackend.NewLateArrivals(reg, roles.Allocator.LateArrivals)
	q := roles.Queue
	octx, stopOps := context.WithCancel(ctx)
	defer stopOps()
	o := &ops.Server{Name: "asyncevent-worker", Registry: reg, Ready: asynceventbackend.Ready(cfg.Config, q), Pprof: cfg.Pprof}
	opsDone, err := o.Start(octx, cfg.OpsListener, cfg.OpsAddr, "-ops-addr", log)
	if err != nil {
		return err
	}
	log.Info("asyncevent-worker consuming", "workerId", cfg.WorkerID, "queue", cfg.Queue, "table", cfg.Table, "concurrency", cfg.Concurrency,
		"batch", cfg.Batch, "visibility", cfg.Visibility, "wait", cfg.Wait, "sweepEvery", cfg.SweepEvery)
	if cfg.Ready != nil {
		cfg.Ready()
	}
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		sweep(ctx, roles.Operations, cfg.SweepEvery, log)
	}()
	expired := make(chan struct{})
	go func() {
		defer close(expired)
		lockJobs(ctx, roles.Operations, cfg.SweepEvery, log)
	}()
	allocated := make(chan struct{})
	go func() {
		defer close(allocated)
		roles.Allocator.Run(ctx)
	}()
	measured := make(chan struct{})
	go func() {
		defer close(measured)
		roles.Line.Run(ctx)
	}()
	desired := make(chan struct{})
	go func() {
		defer close(desired)
		if !cfg.EMF.On {
			return
		}
		// The spike scaling's metric (sdk/autoscale's published.go), at
		// autoscale.PublishEvery, or at EMF.Every when that is shorter
		// (tests).
		every := autoscale.PublishEvery
		if cfg.EMF.Every > 0 {
			every = min(every, cfg.EMF.Every)
		}
		if err := publishDesired(ctx, cfg.EMF.Out, q, cfg.Queue, cfg.Concurrency, every, log); err != nil {
			log.Error("asynceventworker: no desired-workers metric", "err", err)
		}
	}()
	err = consumer.Run(ctx, q, Handler(roles.Worker, log, wm, q), consumer.Config{
		Concurrency: cfg.Concurrency, Batch: cfg.Batch, Visibility: cfg.Visibility, Wait: cfg.Wait, Log: log,
	})
	<-swept
	<-expired
	<-allocated
	<-measured
	<-desired
	stopOps()
	<-opsDone
	log.Info("asyncevent-worker stopped")
	return err
}
