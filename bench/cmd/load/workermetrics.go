package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// workerMetrics is what the load tool reads from a worker's /metrics (see
// docs/metrics.md): the requests it decided (pacer_worker_decided_total,
// every event type: counted when a request becomes terminal, by a
// delivery or by the worker's arrival allocator) and its configured
// concurrency.
type workerMetrics struct {
	Decided     float64
	Concurrency int
	CPUS        float64 // process_cpu_seconds_total
	RSS         float64 // process_resident_memory_bytes
}

// parseWorkerMetrics reads a worker's /metrics text; one without
// pacer_worker_messages_total is not a worker's.
func parseWorkerMetrics(r io.Reader) (workerMetrics, error) {
	var m workerMetrics
	seen := false
	err := samples(r, func(name string, v float64) {
		switch {
		case strings.HasPrefix(name, "pacer_worker_messages_total{"):
			seen = true // a worker's metrics
		case strings.HasPrefix(name, "pacer_worker_decided_total{"):
			m.Decided += v
		case name == "pacer_worker_concurrency":
			m.Concurrency = int(v)
		case name == "process_cpu_seconds_total":
			m.CPUS = v
		case name == "process_resident_memory_bytes":
			m.RSS = v
		}
	})
	if err != nil {
		return m, err
	}
	if !seen {
		return m, fmt.Errorf("no pacer_worker_messages_total")
	}
	return m, nil
}

// scrapeWorker reads url (a worker's ops /metrics).
func scrapeWorker(ctx context.Context, c *http.Client, url string) (workerMetrics, error) {
	resp, err := get(ctx, c, url)
	if err != nil {
		return workerMetrics{}, err
	}
	defer resp.Body.Close()
	m, err := parseWorkerMetrics(resp.Body)
	if err != nil {
		return m, fmt.Errorf("%s: %w", url, err)
	}
	return m, nil
}

func get(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp, nil
}

// workerProc is one entry of the stack's worker list (pacer-dev's GET
// /workers).
type workerProc struct {
	PID     int    `json:"pid"`
	Metrics string `json:"metrics"`
}

// workerSampler reads the workers' decided requests at each sample:
// either the workers the stack lists (list, GET /workers: make run's
// autoscaled processes) or one fixed /metrics URL (-worker-metrics).
type workerSampler struct {
	http  *http.Client
	list  string
	fixed string

	mu    sync.Mutex
	total maxPerPID
	peak  int // the most workers seen running at once
	conc  int // a worker's pacer_worker_concurrency (0: not read)
	cpu   spanPerPID
	rss   float64 // the most resident memory one worker had (since resetCPU)
}

// procs returns the workers to read now.
func (w *workerSampler) procs(ctx context.Context) ([]workerProc, error) {
	if w.fixed != "" {
		return []workerProc{{Metrics: w.fixed}}, nil
	}
	resp, err := get(ctx, w.http, w.list)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var ps []workerProc
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
		return nil, fmt.Errorf("%s: %w", w.list, err)
	}
	return ps, nil
}

// sample reads every worker once and returns the decided requests over
// all the workers seen so far and how many run now.
func (w *workerSampler) sample(ctx context.Context) (decided float64, running int, err error) {
	ps, err := w.procs(ctx)
	if err != nil {
		return 0, 0, err
	}
	type read struct {
		m   workerMetrics
		err error
	}
	reads := make([]read, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() {
			reads[i].m, reads[i].err = scrapeWorker(ctx, w.http, p.Metrics)
		})
	}
	wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, p := range ps {
		if reads[i].err != nil {
			continue // stopping, or not serving yet: its last value stands
		}
		w.total.see(p.PID, reads[i].m.Decided)
		w.cpu.see(p.PID, reads[i].m.CPUS)
		w.rss = max(w.rss, reads[i].m.RSS)
		if c := reads[i].m.Concurrency; c > 0 {
			w.conc = c
		}
	}
	w.peak = max(w.peak, len(ps))
	return w.total.sum(), len(ps), nil
}

// peakWorkers is the most workers seen running at once since the last
// resetPeak (at least 1).
func (w *workerSampler) peakWorkers() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return max(1, w.peak)
}

func (w *workerSampler) resetPeak() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.peak = 0
}

// concurrency is a worker's configured concurrency, def if not read.
func (w *workerSampler) concurrency(def int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conc > 0 {
		return w.conc
	}
	return def
}

// cpuSince returns the CPU seconds the workers spent since the last
// resetCPU, summed over every worker seen since (from each one's first
// reading: a worker started meanwhile misses its start-up's share).
func (w *workerSampler) cpuSince() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cpu.sum()
}

// peakRSS is the most resident memory one worker was seen with since the
// last resetCPU, in bytes.
func (w *workerSampler) peakRSS() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rss
}

// resetCPU starts the CPU and memory figures again.
func (w *workerSampler) resetCPU() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cpu, w.rss = nil, 0
}

// spanPerPID sums a counter's growth over processes: per pid, its last
// value minus its first one seen.
type spanPerPID map[int][2]float64

func (t *spanPerPID) see(pid int, v float64) {
	if *t == nil {
		*t = spanPerPID{}
	}
	s, ok := (*t)[pid]
	if !ok {
		s[0] = v
	}
	s[1] = max(s[1], v)
	(*t)[pid] = s
}

func (t spanPerPID) sum() float64 {
	s := 0.0
	for _, v := range t {
		s += v[1] - v[0]
	}
	return s
}

// maxPerPID sums a counter over processes, keeping the highest value seen
// per pid: a worker that stopped (scaled in) still counts what it did, so
// the sum never drops.
type maxPerPID map[int]float64

func (t *maxPerPID) see(pid int, v float64) {
	if *t == nil {
		*t = maxPerPID{}
	}
	(*t)[pid] = max((*t)[pid], v)
}

func (t maxPerPID) sum() float64 {
	s := 0.0
	for _, v := range t {
		s += v
	}
	return s
}
