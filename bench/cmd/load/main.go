// Command load drives a running local AsyncEvent stack (`make run`) with
// participations and reports what a user would see: ingest latency
// (p50/p95/p99/max) and throughput over time, errors by status, each
// request polled to a terminal state (its end-to-end delay as the client
// sees it), the queue depth sampled over time (the drain curve) and the
// exact-N check on the event's stats. It uses vegeta as a library.
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
// throughput, drain rate and p95 against them; the thresholds file holds
// the goals (thresholds.json: minWorkerRatio, minPipelineIngestRatio,
// maxP95PipelineRatio; minIngestRatio, maxP95TxRatio and p95Ms are off).
//
// With -repeat N the plans run N rounds; every run must meet the
// thresholds of its own (errors, exact N, the DLQ), and the ratio
// thresholds are checked on each plan's median over the rounds (Rounds).
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
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
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
	// MaxDead is how much the DLQ may grow during a run (absent: not
	// checked). Nothing may be lost: a message reaches the DLQ only after
	// its retries failed, so the goal is 0.
	MaxDead *int `json:"maxDead,omitempty"`
}

func main() {
	var (
		target      = flag.String("target", "http://127.0.0.1:8081", "AsyncEvent API base URL (dev mode)")
		allowRemote = flag.Bool("allow-remote", false, "allow a target that is not a loopback address")
		closed      = flag.String("closed", "200,500", "closed-model runs: concurrent users, comma-separated (empty: none)")
		perUser     = flag.Int("requests-per-user", 2, "closed model: requests per concurrent user (each one a new user id)")
		spikeRate   = flag.Int("spike-rate", 300, "open-model spike: arrivals per second (0: no spike)")
		spikeFor    = flag.Duration("spike-for", 5*time.Second, "open-model spike: duration")
		drain       = flag.Duration("drain-timeout", 2*time.Minute, "how long to wait for every request to reach a terminal state")
		out         = flag.String("out", "../.cache/load", "folder for load.json and load.html")
		thresholds  = flag.String("thresholds", "thresholds.json", "thresholds file (p95Ms, maxErrorRate, exactN, minIngestRatio, minWorkerRatio, maxP95TxRatio, minPipelineIngestRatio, maxP95PipelineRatio, maxDead); empty: none")
		dev         = flag.String("dev", "http://127.0.0.1:8080", "make run's health endpoint, which names the stand-ins and the AsyncEvent table for the raw rates, and the list of worker processes")
		dynamoURL   = flag.String("dynamodb", "", "DynamoDB stand-in endpoint (default: from -dev)")
		sqsURL      = flag.String("sqs", "", "SQS stand-in endpoint (default: from -dev)")
		table       = flag.String("table", "", "the AsyncEvent table the raw loops write to and delete their items from (-raw-table product) or copy (scratch) (default: from -dev)")
		rawTable    = flag.String("raw-table", rawOnProduct, "where the raw loops write: product (the product table, with its stream, so both pay the stand-in's stream cost; the raw items are deleted after each measurement) or scratch (a fresh copy of the table without the stream; see RawRates)")
		ordering    = flag.String("raw-ordering", "arrival", "the FIRST_COME ordering the raw worker loop models: arrival (the default ordering) or delivery (see RawRates)")
		rawOn       = flag.Bool("raw", true, "measure the stand-ins' raw rates before and after each closed run, for the ratios")
		warmUp      = flag.Bool("warm-up", true, "before the first raw rates, run the raw ingest loop once and discard it (a freshly started DynamoDB Local runs its first loop at half speed)")
		pollMax     = flag.Int("poll-inflight", 64, "most status polls in flight at once (each accepted request is polled like the page does)")
		pollDuring  = flag.Bool("poll-during", true, "poll requests while the attack runs (false: polls start when it ends, so ingest and its ratio are measured without the clients' reads)")
		workerURL   = flag.String("worker-metrics", "", "one worker's ops /metrics URL for the drain rate and its concurrency (default: every worker the stack lists at -dev, summed)")
		repeat      = flag.Int("repeat", 1, "run the plans this many rounds (closed-200, closed-500, spike, then again): every run must meet the thresholds of its own (errors, exact N, DLQ, p95Ms), the ratio thresholds are checked on each plan's median over the rounds; writes <out>/rounds.json")
	)
	flag.Parse()
	if err := checkTarget(*target, *allowRemote); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	if *repeat < 1 {
		fmt.Fprintf(os.Stderr, "load: -repeat %d: want 1 or more rounds\n", *repeat)
		os.Exit(2)
	}
	var th *Thresholds
	if *thresholds != "" {
		b, err := os.ReadFile(*thresholds)
		if err != nil {
			fmt.Fprintln(os.Stderr, "load: thresholds:", err)
			os.Exit(2)
		}
		th = &Thresholds{}
		if err := json.Unmarshal(b, th); err != nil {
			fmt.Fprintln(os.Stderr, "load: thresholds:", err)
			os.Exit(2)
		}
	}
	var plans []Plan
	for _, f := range strings.Split(*closed, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "load: -closed: %q is not a user count\n", f)
			os.Exit(2)
		}
		plans = append(plans, Plan{Name: fmt.Sprintf("closed-%d", n), Users: n, Requests: n * *perUser})
	}
	if *spikeRate > 0 {
		plans = append(plans, Plan{Name: fmt.Sprintf("spike-%drps", *spikeRate), Rate: *spikeRate, For: *spikeFor, Requests: int(float64(*spikeRate) * spikeFor.Seconds())})
	}
	for i := range plans {
		plans[i].PollInflight, plans[i].PollAfter = *pollMax, !*pollDuring
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := newClient(strings.TrimSuffix(*target, "/"))
	runID := strconv.FormatInt(time.Now().Unix(), 36)
	devURL := strings.TrimSuffix(*dev, "/")
	var st *stack
	if *rawOn || *workerURL == "" {
		var err error
		if st, err = readStack(ctx, c.http, devURL); err != nil {
			fmt.Fprintln(os.Stderr, "load: -dev:", err, "(the stack's health endpoint names the stand-ins, the table and the workers; or pass -raw=false and -worker-metrics)")
			os.Exit(2)
		}
	}
	var workers *workerSampler
	switch {
	case *workerURL != "":
		workers = &workerSampler{http: c.http, fixed: *workerURL}
	case st.workers() != "":
		workers = &workerSampler{http: c.http, list: st.workers()}
	default:
		fmt.Fprintf(os.Stderr, "load: %s/healthz names no worker list (a worker running in-process?): the drain rate is not measured; pass -worker-metrics\n", devURL)
	}
	if workers != nil {
		if _, _, err := workers.sample(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "load: the workers' metrics:", err)
			os.Exit(2)
		}
	}
	if *ordering != "arrival" && *ordering != "delivery" {
		fmt.Fprintf(os.Stderr, "load: -raw-ordering %q: want arrival or delivery\n", *ordering)
		os.Exit(2)
	}
	if *rawTable != rawOnProduct && *rawTable != rawOnScratch {
		fmt.Fprintf(os.Stderr, "load: -raw-table %q: want product or scratch\n", *rawTable)
		os.Exit(2)
	}
	var sis *standins
	if *rawOn {
		d, q, tbl := *dynamoURL, *sqsURL, *table
		if d == "" {
			d = st.DynamoDB
		}
		if q == "" {
			q = st.SQS
		}
		if tbl == "" {
			tbl = st.table()
		}
		if d == "" || q == "" || tbl == "" {
			fmt.Fprintf(os.Stderr, "load: raw rates: %s/healthz names no DynamoDB or SQS endpoint or AsyncEvent table (pass -dynamodb, -sqs and -table, or -raw=false)\n", devURL)
			os.Exit(2)
		}
		var err error
		if sis, err = newStandins(ctx, d, q, tbl, runID); err != nil {
			fatal(err)
		}
		sis.onProduct = *rawTable == rawOnProduct
		if *pollDuring {
			sis.pollInflight = *pollMax
		}
	}
	// The raw worker loop runs at the workers' concurrency: a worker's
	// (pacer_worker_concurrency; 10, the default, if not read) × the
	// workers running (before a run: now; after it: the most that ran).
	perWorker := 10
	if workers != nil {
		perWorker = workers.concurrency(perWorker)
	}
	if sis != nil && *warmUp {
		for _, p := range plans {
			if p.Users > 0 {
				fmt.Fprintf(os.Stderr, "[warm-up] %d plain ingests at %d goroutines, not counted (-warm-up=false to skip)...\n", p.Requests, p.Users)
				if err := sis.warm(ctx, p.Users, p.Requests); err != nil {
					fatal(err)
				}
				break
			}
		}
	}
	var reports []*Report
	var raw *RawRates
	var runs []Plan
	for round := 1; round <= *repeat; round++ {
		for _, p := range plans {
			if *repeat > 1 {
				p.Round = round
			}
			runs = append(runs, p)
		}
	}
	// one measures the raw rates around p (closed runs) and runs it.
	one := func(p Plan) (*Report, error) {
		if sis != nil && p.Users > 0 {
			conc := perWorker
			if workers != nil {
				workers.resetPeak()
				if _, n, err := workers.sample(ctx); err == nil {
					conc = perWorker * max(1, n)
				}
			}
			fmt.Fprintf(os.Stderr, "[%s] raw rates of the stand-ins (%d plain ingests at %d goroutines, then %d plain %s deliveries at %d)...\n", p.Key(), p.Requests, p.Users, p.Requests, *ordering, conc)
			var err error
			if raw, err = sis.measure(ctx, p.Key(), *ordering, p.Users, conc, p.Requests); err != nil {
				return nil, err
			}
		}
		if workers != nil {
			workers.resetPeak()
		}
		r, err := run(ctx, c, p, runID, *drain, workers, raw)
		if err != nil {
			return nil, err
		}
		if sis != nil && p.Users > 0 {
			conc := perWorker * max(1, r.PeakWorkers)
			fmt.Fprintf(os.Stderr, "[%s] raw rates after the run (worker loop at %d goroutines = %d per worker × %d, the most workers that ran)...\n", p.Key(), conc, perWorker, max(1, r.PeakWorkers))
			if r.RawAfter, err = sis.measure(ctx, p.Key()+"-after", *ordering, p.Users, conc, p.Requests); err != nil {
				return nil, err
			}
			// An open-model run that follows compares with the latest
			// raw rates, measured at the most workers that ran.
			raw = r.RawAfter
		}
		return r, nil
	}
	// A run that cannot finish stops the load; the runs before it are
	// still reported and written.
	var stopped error
	for _, p := range runs {
		r, err := one(p)
		if err != nil {
			stopped = fmt.Errorf("%s: %w", p.Key(), err)
			fmt.Fprintf(os.Stderr, "load: %v (stopping; the %d runs finished are written)\n", stopped, len(reports))
			break
		}
		r.ratios()
		if *repeat > 1 {
			r.CheckRun(th)
		} else {
			r.Check(th)
		}
		fmt.Print(r.Summary())
		reports = append(reports, r)
	}
	var rounds []*Rounds
	if *repeat > 1 {
		rounds = roundsOf(reports)
		for _, g := range rounds {
			g.Check(th)
			fmt.Print(g.Summary())
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatal(err)
	}
	jb, _ := json.MarshalIndent(reports, "", "  ") // plain data
	jsonPath, htmlPath := filepath.Join(*out, "load.json"), filepath.Join(*out, "load.html")
	if err := os.WriteFile(jsonPath, jb, 0o644); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(htmlPath, []byte(HTML(reports, rounds)), 0o644); err != nil {
		fatal(err)
	}
	fmt.Printf("Wrote %s and %s\n", jsonPath, htmlPath)
	if rounds != nil {
		rb, _ := json.MarshalIndent(rounds, "", "  ") // plain data
		roundsPath := filepath.Join(*out, "rounds.json")
		if err := os.WriteFile(roundsPath, rb, 0o644); err != nil {
			fatal(err)
		}
		fmt.Printf("Wrote %s\n", roundsPath)
	}
	failed := stopped != nil
	for _, r := range reports {
		if len(r.Failed) > 0 {
			fmt.Printf("FAIL: %s: %s\n", r.Key(), strings.Join(r.Failed, "; "))
			failed = true
		}
	}
	for _, g := range rounds {
		if len(g.Failed) > 0 {
			fmt.Printf("FAIL: %s over %d rounds: %s\n", g.Name, len(g.Rounds), strings.Join(g.Failed, "; "))
			failed = true
		}
	}
	if failed {
		os.Exit(1)
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
