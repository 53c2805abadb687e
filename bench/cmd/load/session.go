package main

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// session is what the runs of one load share: the API client, the
// workers' sampler, the stand-ins for the raw rates and the latest raw
// rates measured.
type session struct {
	cfg     Config
	c       *client
	runID   string
	st      *stack         // the stack at -dev; nil when nothing needs it
	workers *workerSampler // nil: the drain rate is not measured
	sis     *standins      // nil: no raw rates (-raw=false)
	// perWorker is a worker's concurrency (pacer_worker_concurrency; 10,
	// the default, if not read).
	perWorker int
	// raw are the latest raw rates, which an open-model run compares with.
	raw *RawRates
}

// newSession reads the stack at -dev when the raw rates or the workers'
// list need it, checks that the workers' metrics answer and opens the
// stand-ins for the raw rates.
func newSession(ctx context.Context, cfg Config, c *client, runID string) (*session, error) {
	s := &session{cfg: cfg, c: c, runID: runID}
	devURL := strings.TrimSuffix(cfg.Dev, "/")
	var st *stack
	if cfg.Raw || cfg.WorkerMetrics == "" || cfg.Scripted.People > 0 {
		var err error
		if st, err = readStack(ctx, c.http, devURL); err != nil {
			return nil, usage("-dev: %w (the stack's health endpoint names the stand-ins, the table, the workers and the rate limits; or pass -raw=false, -worker-metrics and -scripted-people 0)", err)
		}
	}
	s.st = st
	switch {
	case cfg.WorkerMetrics != "":
		s.workers = &workerSampler{http: c.http, fixed: cfg.WorkerMetrics}
	case st.workers() != "":
		s.workers = &workerSampler{http: c.http, list: st.workers()}
	default:
		fmt.Fprintf(os.Stderr, "load: %s/healthz names no worker list (a worker running in-process?): the drain rate is not measured; pass -worker-metrics\n", devURL)
	}
	if s.workers != nil {
		if _, _, err := s.workers.sample(ctx); err != nil {
			return nil, usage("the workers' metrics: %w", err)
		}
	}
	if cfg.Ordering != "arrival" && cfg.Ordering != "delivery" {
		return nil, usage("-raw-ordering %q: want arrival or delivery", cfg.Ordering)
	}
	if cfg.RawTable != rawOnProduct && cfg.RawTable != rawOnScratch {
		return nil, usage("-raw-table %q: want product or scratch", cfg.RawTable)
	}
	if cfg.Raw {
		var err error
		if s.sis, err = openStandins(ctx, cfg, st, devURL, runID); err != nil {
			return nil, err
		}
	}
	// The raw worker loop runs at the workers' concurrency: a worker's
	// (pacer_worker_concurrency; 10, the default, if not read) × the
	// workers running (before a run: now; after it: the most that ran).
	s.perWorker = 10
	if s.workers != nil {
		s.perWorker = s.workers.concurrency(s.perWorker)
	}
	return s, nil
}

// openStandins opens the stand-ins the raw loops run on: the flags'
// endpoints and table, or those the stack at -dev names.
func openStandins(ctx context.Context, cfg Config, st *stack, devURL, runID string) (*standins, error) {
	d, q, tbl := cfg.DynamoDB, cfg.SQS, cfg.Table
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
		return nil, usage("raw rates: %s/healthz names no DynamoDB or SQS endpoint or AsyncEvent table (pass -dynamodb, -sqs and -table, or -raw=false)", devURL)
	}
	sis, err := newStandins(ctx, d, q, tbl, runID)
	if err != nil {
		return nil, err
	}
	sis.onProduct = cfg.RawTable == rawOnProduct
	if cfg.PollDuring {
		sis.pollInflight = cfg.PollInflight
	}
	return sis, nil
}

// warm runs the raw ingest loop once at the first closed plan's size and
// discards it (-warm-up): a freshly started DynamoDB Local runs its first
// loop at half speed.
func (s *session) warm(ctx context.Context, plans []Plan) error {
	if s.sis == nil || !s.cfg.WarmUp {
		return nil
	}
	for _, p := range plans {
		if p.Users > 0 {
			fmt.Fprintf(os.Stderr, "[warm-up] %d plain ingests at %d goroutines, not counted (-warm-up=false to skip)...\n", p.Requests, p.Users)
			return s.sis.warm(ctx, p.Users, p.Requests)
		}
	}
	return nil
}

// runAll runs each plan in turn, checks it against th and prints its
// summary. A run that cannot finish stops the load: its error is
// returned with the reports of the runs before it, which are still
// reported and written.
func (s *session) runAll(ctx context.Context, runs []Plan, th *Thresholds) (reports []*Report, stopped error) {
	for _, p := range runs {
		r, err := s.one(ctx, p)
		if err != nil {
			stopped = fmt.Errorf("%s: %w", p.Key(), err)
			fmt.Fprintf(os.Stderr, "load: %v (stopping; the %d runs finished are written)\n", stopped, len(reports))
			break
		}
		r.ratios()
		if s.cfg.Repeat > 1 {
			r.CheckRun(th)
		} else {
			r.Check(th)
		}
		fmt.Print(r.Summary())
		reports = append(reports, r)
	}
	return reports, stopped
}

// one measures the raw rates around p (closed runs) and runs it.
func (s *session) one(ctx context.Context, p Plan) (*Report, error) {
	if s.sis != nil && p.Users > 0 {
		conc := s.perWorker
		if s.workers != nil {
			s.workers.resetPeak()
			if _, n, err := s.workers.sample(ctx); err == nil {
				conc = s.perWorker * max(1, n)
			}
		}
		fmt.Fprintf(os.Stderr, "[%s] raw rates of the stand-ins (%d plain ingests at %d goroutines, then %d plain %s deliveries at %d)...\n", p.Key(), p.Requests, p.Users, p.Requests, s.cfg.Ordering, conc)
		var err error
		if s.raw, err = s.sis.measure(ctx, p.Key(), s.cfg.Ordering, p.Users, conc, p.Requests); err != nil {
			return nil, err
		}
	}
	if s.workers != nil {
		s.workers.resetPeak()
	}
	r, err := run(ctx, s.c, p, s.runID, s.cfg.Drain, s.workers, s.raw)
	if err != nil {
		return nil, err
	}
	if s.sis != nil && p.Users > 0 {
		conc := s.perWorker * max(1, r.PeakWorkers)
		fmt.Fprintf(os.Stderr, "[%s] raw rates after the run (worker loop at %d goroutines = %d per worker × %d, the most workers that ran)...\n", p.Key(), conc, s.perWorker, max(1, r.PeakWorkers))
		if r.RawAfter, err = s.sis.measure(ctx, p.Key()+"-after", s.cfg.Ordering, p.Users, conc, p.Requests); err != nil {
			return nil, err
		}
		// An open-model run that follows compares with the latest
		// raw rates, measured at the most workers that ran.
		s.raw = r.RawAfter
	}
	return r, nil
}
