// Command load drives a running local AsyncEvent stack (`make run`) with
// participations and reports what a user would see: ingest latency
// (p50/p95/p99/max) and throughput over time, errors by status, each
// request polled to a terminal state (its end-to-end delay as the client
// sees it), the queue depth sampled over time (the drain curve) and the
// exact-N check on the event's stats. It uses vegeta as a library.
//
// Last, a scripted-client scenario (-scripted-people, 0: off): people
// alone, then the same number of people beside one user hammering polls
// and many user ids participating from one address (X-Forwarded-For,
// which make run believes from loopback); the report shows what the rate
// limits let the scripted clients through against their budgets, and
// the people's p95 in both phases (<out>/scripted.json).
//
// Scenarios: closed-model runs with a fixed number of concurrent users
// (-closed 200,500), each issuing one participation per user id, and an
// open-model spike at a fixed arrival rate (-spike-rate, -spike-for). Each
// run gets its own FIRST_COME event whose capacity is half its requests,
// so both SUCCESS and REJECTED_CAPACITY happen and exact N is tested, and
// closes it afterwards.
//
// Ratios: before and after each closed run, plain AWS SDK loops measure
// the stand-ins' raw rates for one ingest's and one delivery's calls (see
// RawRates), at the run's N and concurrency, on the stand-ins make run's
// health endpoint names (-dev); with -worker-metrics the worker's drain
// rate under backlog is sampled from its /metrics. The summary reports
// throughput, drain rate and p95 against them, informational: a missed
// ratio bound (thresholds.json: minWorkerRatio, minPipelineIngestRatio,
// maxP95PipelineRatio) is a note. A run's verdict is errors, exact N, the
// DLQ and Pacer's own CPU per operation, read from the API's and the
// workers' process_cpu_seconds_total (maxApiCpuMsPerParticipation,
// maxWorkerCpuMsPerDecision).
//
// With -repeat N the plans run N rounds; every run must meet the
// thresholds of its own, and the ratio bounds are noted on each plan's
// median over the rounds (Rounds).
//
// It talks to the API in dev mode (the X-Pacer-Dev-* headers act as users
// and as an admin), on loopback only unless -allow-remote. At the end it
// prints a summary and writes <out>/load.json and <out>/load.html (charts
// as inline SVG); a thresholds file (-thresholds) sets the exit code.
//
//	cd bench && go run ./cmd/load -target http://127.0.0.1:8081
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"time"
)

// Thresholds decide the exit code.
type Thresholds struct {
	P95Ms        float64 `json:"p95Ms"`        // ingest p95 must be at most this
	MaxErrorRate float64 `json:"maxErrorRate"` // non-202 answers / requests
	ExactN       bool    `json:"exactN"`       // SUCCEEDED == min(capacity, accepted) and the invariant holds
	// The goals against the stand-ins' raw rates in the same run (0: off).
	MinIngestRatio float64 `json:"minIngestRatio"` // closed model: throughput / raw ingest rate
	MinWorkerRatio float64 `json:"minWorkerRatio"` // drain rate / raw worker rate, when a backlog was measured
	MaxP95TxRatio  float64 `json:"maxP95TxRatio"`  // ingest p95 / raw TransactWriteItems p95
	// Against the raw pipeline (ingest loop, worker loop and the clients'
	// polls at once: the same concurrent work as the run; closed model).
	MinPipelineIngestRatio float64 `json:"minPipelineIngestRatio"` // throughput / raw pipeline ingest rate
	MaxP95PipelineRatio    float64 `json:"maxP95PipelineRatio"`    // ingest p95 / raw pipeline ingest p95
	// Pacer's own CPU per operation, from the processes' /metrics (0:
	// off): the API's per participation (with its clients' polls), the
	// workers' per decision. These, errors, exact N and the DLQ decide a
	// run; the ratios above are informational (Report.checkRatios).
	MaxAPICPUMs    float64 `json:"maxApiCpuMsPerParticipation"`
	MaxWorkerCPUMs float64 `json:"maxWorkerCpuMsPerDecision"`
	// MaxDead is how much the DLQ may grow during a run (absent: not
	// checked). Nothing may be lost: a message reaches the DLQ only after
	// its retries failed, so the goal is 0.
	MaxDead *int `json:"maxDead,omitempty"`
	// MaxScriptedP95Ratio is how much the people's p95 may rise beside
	// the scripted clients (and by 20 ms; 0: not checked).
	MaxScriptedP95Ratio float64 `json:"maxScriptedP95Ratio"`
}

// Config is the command's flags: the target, the plans, the raw rates'
// settings and where the results go. Run reads nothing else.
type Config struct {
	Target        string
	AllowRemote   bool
	Closed        string
	PerUser       int
	SpikeRate     int
	SpikeFor      time.Duration
	Drain         time.Duration
	Out           string
	Thresholds    string
	Dev           string
	DynamoDB      string
	SQS           string
	Table         string
	RawTable      string
	Ordering      string
	Raw           bool
	WarmUp        bool
	PollInflight  int
	PollDuring    bool
	WorkerMetrics string
	Repeat        int
	Scripted      ScriptedConfig
}

// parseFlags reads the command line into a Config.
func parseFlags() Config {
	var cfg Config
	flag.StringVar(&cfg.Target, "target", "http://127.0.0.1:8081", "AsyncEvent API base URL (dev mode)")
	flag.BoolVar(&cfg.AllowRemote, "allow-remote", false, "allow a target that is not a loopback address")
	flag.StringVar(&cfg.Closed, "closed", "200,500", "closed-model runs: concurrent users, comma-separated (empty: none)")
	flag.IntVar(&cfg.PerUser, "requests-per-user", 2, "closed model: requests per concurrent user (each one a new user id)")
	flag.IntVar(&cfg.SpikeRate, "spike-rate", 300, "open-model spike: arrivals per second (0: no spike)")
	flag.DurationVar(&cfg.SpikeFor, "spike-for", 5*time.Second, "open-model spike: duration")
	flag.DurationVar(&cfg.Drain, "drain-timeout", 2*time.Minute, "how long to wait for every request to reach a terminal state")
	flag.StringVar(&cfg.Out, "out", "../.cache/load", "folder for load.json and load.html")
	flag.StringVar(&cfg.Thresholds, "thresholds", "thresholds.json", "thresholds file (p95Ms, maxErrorRate, exactN, minIngestRatio, minWorkerRatio, maxP95TxRatio, minPipelineIngestRatio, maxP95PipelineRatio, maxDead); empty: none")
	flag.StringVar(&cfg.Dev, "dev", "http://127.0.0.1:8080", "make run's health endpoint, which names the stand-ins and the AsyncEvent table for the raw rates, and the list of worker processes")
	flag.StringVar(&cfg.DynamoDB, "dynamodb", "", "DynamoDB stand-in endpoint (default: from -dev)")
	flag.StringVar(&cfg.SQS, "sqs", "", "SQS stand-in endpoint (default: from -dev)")
	flag.StringVar(&cfg.Table, "table", "", "the AsyncEvent table the raw loops write to and delete their items from (-raw-table product) or copy (scratch) (default: from -dev)")
	flag.StringVar(&cfg.RawTable, "raw-table", rawOnProduct, "where the raw loops write: product (the product table, with its stream, so both pay the stand-in's stream cost; the raw items are deleted after each measurement) or scratch (a fresh copy of the table without the stream; see RawRates)")
	flag.StringVar(&cfg.Ordering, "raw-ordering", "arrival", "the FIRST_COME ordering the raw worker loop models: arrival (the default ordering) or delivery (see RawRates)")
	flag.BoolVar(&cfg.Raw, "raw", true, "measure the stand-ins' raw rates before and after each closed run, for the ratios")
	flag.BoolVar(&cfg.WarmUp, "warm-up", true, "before the first raw rates, run the raw ingest loop once and discard it (a freshly started DynamoDB Local runs its first loop at half speed)")
	flag.IntVar(&cfg.PollInflight, "poll-inflight", 64, "most status polls in flight at once (each accepted request is polled like the page does)")
	flag.BoolVar(&cfg.PollDuring, "poll-during", true, "poll requests while the attack runs (false: polls start when it ends, so ingest and its ratio are measured without the clients' reads)")
	flag.StringVar(&cfg.WorkerMetrics, "worker-metrics", "", "one worker's ops /metrics URL for the drain rate and its concurrency (default: every worker the stack lists at -dev, summed)")
	flag.IntVar(&cfg.Repeat, "repeat", 1, "run the plans this many rounds (closed-200, closed-500, spike, then again): every run must meet the thresholds of its own (errors, exact N, DLQ, p95Ms), the ratio thresholds are checked on each plan's median over the rounds; writes <out>/rounds.json")
	flag.IntVar(&cfg.Scripted.People, "scripted-people", 100, "scripted-client scenario: people per phase, each from an address of its own (0: no scenario)")
	flag.DurationVar(&cfg.Scripted.For, "scripted-for", 10*time.Second, "scripted-client scenario: each phase's length")
	flag.IntVar(&cfg.Scripted.HammerRate, "hammer-rate", 200, "scripted-client scenario: one user's polls a second")
	flag.IntVar(&cfg.Scripted.CrowdRate, "crowd-rate", 50, "scripted-client scenario: participations a second from one address, each a new user id")
	flag.StringVar(&cfg.Scripted.CrowdBudget, "crowd-budget", "30/m", "scripted-client scenario: the event's own budget of participations per address")
	flag.Parse()
	return cfg
}

func main() {
	cfg := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := Run(ctx, cfg)
	stop()
	exit(err)
}

// exitError ends the command with its code after printing its error:
// 2 for a flag, a file or a stack that does not allow the load to start.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usage is the exitError (code 2) of a load that cannot start.
func usage(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// errFailed is Run's error when a run stopped or missed its thresholds:
// the FAIL lines are already printed, the command exits 1.
var errFailed = errors.New("the load failed")

// exit ends the command as err says: nothing for nil, 1 for errFailed,
// the code of an exitError, or 1 after printing any other error.
func exit(err error) {
	var e *exitError
	switch {
	case err == nil:
	case errors.Is(err, errFailed):
		os.Exit(1)
	case errors.As(err, &e):
		fmt.Fprintln(os.Stderr, "load:", e.err)
		os.Exit(e.code)
	default:
		fatal(err)
	}
}

// fatal reports err and exits 1.
func fatal(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(1)
}

// checkTarget refuses a target that is not on loopback unless allowed.
func checkTarget(target string, allowRemote bool) error {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("-target %q is not a URL", target)
	}
	if allowRemote {
		return nil
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-target %s is not a loopback address; pass -allow-remote to load another host", target)
}
