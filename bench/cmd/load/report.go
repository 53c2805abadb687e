package main

import (
	"fmt"
	"html"
	"sort"
	"strings"
	"sync"
	"time"
)

// Report is one run's figures; load.json holds one per run.
type Report struct {
	Name string `json:"name"`
	// Round is the run's round in a -repeat run (0: not repeated).
	Round    int       `json:"round,omitempty"`
	Event    string    `json:"event"`
	Capacity int       `json:"capacity"`
	Users    int       `json:"users,omitempty"` // closed model
	Rate     int       `json:"rate,omitempty"`  // open model, arrivals per second
	Requests int       `json:"requests"`
	Started  time.Time `json:"started"`

	Sent          int            `json:"sent"`
	Accepted      int            `json:"accepted"`
	Errors        map[string]int `json:"errorsByStatus"`
	ThroughputRPS float64        `json:"throughputRps"`
	P50Ms         float64        `json:"p50Ms"`
	P95Ms         float64        `json:"p95Ms"`
	P99Ms         float64        `json:"p99Ms"`
	MaxMs         float64        `json:"maxMs"`
	AttackS       float64        `json:"attackSeconds"`
	DrainS        float64        `json:"drainSeconds"`

	Terminal int            `json:"terminal"` // accepted requests seen in a terminal state
	Results  map[string]int `json:"resultsByCode"`
	E2EP50Ms float64        `json:"e2eP50Ms"`
	E2EP95Ms float64        `json:"e2eP95Ms"`
	E2EMaxMs float64        `json:"e2eMaxMs"`
	E2E      []float64      `json:"-"`
	// Polls is what the clients' status polls saw.
	Polls PollStats `json:"polls"`

	Succeeded         int  `json:"succeeded"`
	CapacityRemaining int  `json:"capacityRemaining"`
	InvariantOK       bool `json:"invariantOk"`
	ExactN            bool `json:"exactN"`

	// Raw are the stand-ins' raw rates measured just before this run (nil
	// if not measured); the ratios compare with them (0: not measured).
	Raw *RawRates `json:"raw,omitempty"`
	// RawAfter are the same loops right after the run; the ratios use the
	// mean of both, so a machine that got busier or quieter during the
	// run shows as a gap between them rather than as a skewed ratio.
	RawAfter *RawRates `json:"rawAfter,omitempty"`
	// DrainRPS is the workers' drain: requests decided
	// (pacer_worker_decided_total: made terminal by a delivery or by an
	// arrival allocator, summed over the workers) per second over the
	// sampled intervals that began with decisions still to come, after the
	// attack (during it when the workers kept up).
	DrainRPS          float64 `json:"drainRps"`
	DrainWindowS      float64 `json:"drainWindowSeconds"`
	DrainDuringIngest bool    `json:"drainDuringIngest,omitempty"`
	RawIngestRPS      float64 `json:"rawIngestRps,omitempty"` // mean of Raw and RawAfter
	RawWorkerRPS      float64 `json:"rawWorkerRps,omitempty"`
	RawTxP95Ms        float64 `json:"rawTxP95Ms,omitempty"`
	// RawPipelineIngestRPS and RawPipelineIngestP95Ms are the means of
	// Raw's and RawAfter's PipelineIngestRPS and PipelineIngestP95Ms.
	RawPipelineIngestRPS   float64 `json:"rawPipelineIngestRps,omitempty"`
	RawPipelineIngestP95Ms float64 `json:"rawPipelineIngestP95Ms,omitempty"`
	Ratios
	Notes []string `json:"notes,omitempty"`

	// API is where the ingests' time went in the API during the attack
	// (its /metrics): the stand-ins' calls and Pacer's own code (nil: not
	// read).
	API *IngestSplit `json:"api,omitempty"`
	// WorkerCPU is the workers' CPU time per request they decided during
	// the run, from their /metrics (nil: not read).
	WorkerCPU *WorkerCPU `json:"workerCpu,omitempty"`

	// PeakWorkers is the most worker processes seen running at once
	// during the run (0: not read); the raw worker loop after the run
	// runs at their concurrency (RawAfter.WorkerConcurrency).
	PeakWorkers int `json:"peakWorkers,omitempty"`
	// The DLQ's depth at the first sample, its peak, and the growth (peak
	// − first): a message that reached the DLQ during the run failed
	// after its retries (thresholds' maxDead).
	DeadStart  int `json:"deadStart"`
	DeadPeak   int `json:"deadPeak"`
	DeadGrowth int `json:"deadGrowth"`

	Seconds []Second      `json:"seconds"` // per second of the attack
	Queue   []QueueSample `json:"queue"`   // every 0.5 s until drained
	Failed  []string      `json:"failedThresholds,omitempty"`
}

// Ratios are a run's figures against the stand-ins' raw rates measured
// in the same run (0: not measured). The JSON holds them flat in the run.
type Ratios struct {
	// IngestRatio = ThroughputRPS / RawIngestRPS (closed model only: an
	// open model's throughput is its arrival rate). WorkerRatio = DrainRPS
	// / RawWorkerRPS. P95TxRatio = P95Ms / RawTxP95Ms.
	IngestRatio float64 `json:"ingestRatio,omitempty"`
	WorkerRatio float64 `json:"workerRatio,omitempty"`
	P95TxRatio  float64 `json:"p95TxRatio,omitempty"`
	// PipelineIngestRatio = ThroughputRPS / RawPipelineIngestRPS: ingest
	// against the raw ingest loop while the raw worker loop drains and its
	// requests are polled (RawRates.PipelineIngestRPS), as the product's
	// ingest runs; checked by minPipelineIngestRatio.
	PipelineIngestRatio float64 `json:"pipelineIngestRatio,omitempty"`
	// P95PipelineRatio = P95Ms / RawPipelineIngestP95Ms: the product's
	// ingest p95 against the raw pipeline's whole-ingest p95 under the
	// same concurrent work (closed model only).
	P95PipelineRatio float64 `json:"p95PipelineRatio,omitempty"`
}

// Second is one second of the attack.
type Second struct {
	Sent   int     `json:"sent"`
	OK     int     `json:"ok"`
	P95Ms  float64 `json:"p95Ms"`
	MaxMs  float64 `json:"maxMs"`
	latens []float64
}

// QueueSample is the queue depth at AtS seconds after the start.
type QueueSample struct {
	AtS  float64 `json:"atS"`
	Main int     `json:"main"`
	Dead int     `json:"dead"`
	// Decided is the requests the workers made terminal
	// (pacer_worker_decided_total), summed over every worker seen so
	// far (each at the highest value it reported), at AtS; -1 when not
	// read. For arrival events the allocator decides, and a candidate's
	// message is acked only by a later delivery: decisions, not acks, are
	// the drain.
	Decided float64 `json:"decided"`
	// Workers is how many worker processes ran at AtS; -1 when not read.
	Workers int `json:"workers"`
}

// deadLetters sets DeadStart, DeadPeak and DeadGrowth from the samples.
func (r *Report) deadLetters() {
	if len(r.Queue) == 0 {
		return
	}
	r.DeadStart, r.DeadPeak = r.Queue[0].Dead, r.Queue[0].Dead
	for _, q := range r.Queue {
		r.DeadPeak = max(r.DeadPeak, q.Dead)
	}
	r.DeadGrowth = r.DeadPeak - r.DeadStart
}

// drainRate sets DrainRPS from the samples: requests decided per second
// over the intervals from the run's first decision on that began with
// decisions still to come, preferring those after the attack, when ingest
// no longer shares the machine.
func (r *Report) drainRate() {
	// The drain lasts while decisions are still to come: an arrival
	// candidate's message waits delayed (not in the visible depth) while
	// the allocator works through the backlog.
	final := -1.0
	for _, q := range r.Queue {
		final = max(final, q.Decided)
	}
	// Nor does it start before the run's first decision: an arrival
	// allocator decides a request only MaxLateness (3.5 s) after its
	// queuedAt (docs/fairness.md), a wait the E2E delay shows, not a rate.
	first := len(r.Queue)
	for i := 1; i < len(r.Queue); i++ {
		if a, b := r.Queue[i-1], r.Queue[i]; a.Decided >= 0 && b.Decided > a.Decided {
			first = i
			break
		}
	}
	sum := func(after float64) (n, s float64) {
		for i := max(1, first); i < len(r.Queue); i++ {
			a, b := r.Queue[i-1], r.Queue[i]
			if a.AtS < after || a.Decided < 0 || b.Decided < 0 || a.Decided >= final {
				continue
			}
			n += b.Decided - a.Decided
			s += b.AtS - a.AtS
		}
		return n, s
	}
	n, s := sum(r.AttackS)
	if s < 1 {
		n, s = sum(0)
		r.DrainDuringIngest = s > 0
	}
	if s < 1 {
		r.Notes = append(r.Notes, "worker drain rate not measured: under 1 s of sampled backlog (or the workers' metrics were not read); the workers kept up with ingest")
		return
	}
	r.DrainRPS, r.DrainWindowS = n/s, s
}

// ratios sets the ratios to the raw rates.
func (r *Report) ratios() {
	if r.Raw == nil {
		r.Notes = append(r.Notes, "raw rates not measured (-raw=false, or an open-model run before any closed one): no ratios")
		return
	}
	ingest, worker, txp95 := r.Raw.IngestRPS, r.Raw.WorkerRPS, r.Raw.TxP95Ms
	if a := r.RawAfter; a != nil {
		ingest, worker, txp95 = (ingest+a.IngestRPS)/2, (worker+a.WorkerRPS)/2, (txp95+a.TxP95Ms)/2
		if a.WorkerConcurrency != r.Raw.WorkerConcurrency {
			// More workers ran than before the run: the after loop, at
			// their concurrency, is the limit.
			worker = a.WorkerRPS
			r.Notes = append(r.Notes, fmt.Sprintf("worker ratio against the raw worker loop after the run only: %d goroutines = %d per worker × %d workers (the most that ran), before it %d",
				a.WorkerConcurrency, a.WorkerConcurrency/max(1, r.PeakWorkers), r.PeakWorkers, r.Raw.WorkerConcurrency))
		}
	}
	r.RawIngestRPS, r.RawWorkerRPS, r.RawTxP95Ms = ingest, worker, txp95
	if r.Users > 0 && ingest > 0 {
		r.IngestRatio = r.ThroughputRPS / ingest
	}
	pipe, pipeP95 := r.Raw.PipelineIngestRPS, r.Raw.PipelineIngestP95Ms
	if a := r.RawAfter; a != nil {
		pipe, pipeP95 = (pipe+a.PipelineIngestRPS)/2, (pipeP95+a.PipelineIngestP95Ms)/2
	}
	if r.RawPipelineIngestRPS = pipe; r.Users > 0 && pipe > 0 {
		r.PipelineIngestRatio = r.ThroughputRPS / pipe
	}
	if r.RawPipelineIngestP95Ms = pipeP95; r.Users > 0 && pipeP95 > 0 {
		r.P95PipelineRatio = r.P95Ms / pipeP95
	}
	if r.DrainRPS > 0 && worker > 0 {
		r.WorkerRatio = r.DrainRPS / worker
	}
	if txp95 > 0 {
		r.P95TxRatio = r.P95Ms / txp95
	}
}

func (r *Report) addSecond(sec int, latencyMs float64, ok bool) {
	for len(r.Seconds) <= sec {
		r.Seconds = append(r.Seconds, Second{})
	}
	s := &r.Seconds[sec]
	s.Sent++
	if ok {
		s.OK++
	}
	s.latens = append(s.latens, latencyMs)
	sort.Float64s(s.latens)
	s.P95Ms, s.MaxMs = pct(s.latens, .95), s.latens[len(s.latens)-1]
}

func (r *Report) lastDepth(mu *sync.Mutex) int {
	mu.Lock()
	defer mu.Unlock()
	if len(r.Queue) == 0 {
		return 0
	}
	return r.Queue[len(r.Queue)-1].Main
}

// Check records the thresholds r breaks.
func (r *Report) Check(th *Thresholds) {
	if th == nil {
		return
	}
	r.CheckRun(th)
	r.checkRatios(th)
}

// CheckRun appends to r.Failed the thresholds of r itself, which every
// run must meet: p95Ms, the error rate, exact N, maxDead and every
// request terminal. In a -repeat run the ratio thresholds are checked on
// the rounds' medians instead (Rounds.Check).
func (r *Report) CheckRun(th *Thresholds) {
	if th == nil {
		return
	}
	if th.P95Ms > 0 && r.P95Ms > th.P95Ms {
		r.Failed = append(r.Failed, fmt.Sprintf("ingest p95 %.1f ms > %.1f ms", r.P95Ms, th.P95Ms))
	}
	if rate := float64(r.Sent-r.Accepted) / float64(max(1, r.Sent)); rate > th.MaxErrorRate {
		r.Failed = append(r.Failed, fmt.Sprintf("error rate %.4f > %.4f", rate, th.MaxErrorRate))
	}
	if th.ExactN && !r.ExactN {
		r.Failed = append(r.Failed, fmt.Sprintf("exact N: %d SUCCEEDED of capacity %d for %d accepted (remaining %d, invariant %v)",
			r.Succeeded, r.Capacity, r.Accepted, r.CapacityRemaining, r.InvariantOK))
	}
	if th.MaxDead != nil && r.DeadGrowth > *th.MaxDead {
		r.Failed = append(r.Failed, fmt.Sprintf("the DLQ grew by %d messages during the run (from %d to a peak of %d) > %d", r.DeadGrowth, r.DeadStart, r.DeadPeak, *th.MaxDead))
	}
	if r.Terminal != r.Accepted {
		r.Failed = append(r.Failed, fmt.Sprintf("%d of %d accepted requests reached no terminal state in time", r.Accepted-r.Terminal, r.Accepted))
	}
	if a := r.API; th.MaxAPICPUMs > 0 && a != nil && a.CPUMs > th.MaxAPICPUMs {
		r.Failed = append(r.Failed, fmt.Sprintf("the API spent %.2f ms of CPU per participation (with %.1f polls each) > %.2f ms", a.CPUMs, a.PollsPer, th.MaxAPICPUMs))
	}
	if w := r.WorkerCPU; th.MaxWorkerCPUMs > 0 && w != nil && w.CPUMs > th.MaxWorkerCPUMs {
		r.Failed = append(r.Failed, fmt.Sprintf("the workers spent %.2f ms of CPU per decision > %.2f ms", w.CPUMs, th.MaxWorkerCPUMs))
	}
}

// checkRatios notes the ratio thresholds r misses (a ratio not measured,
// 0, is not checked). They are informational: DynamoDB Local sets both
// sides of each ratio and moves it by half within one run, so a run's
// verdict comes from errors, exact N, the DLQ and Pacer's own CPU per
// operation (CheckRun).
func (r *Report) checkRatios(th *Thresholds) {
	for _, k := range ratioKinds {
		if bound := k.bound(th); k.misses(*k.of(&r.Ratios), bound) {
			r.Notes = append(r.Notes, "informational: "+k.failed(r, bound))
		}
	}
}

// WorkerCPU is the workers' CPU time per decision in a run.
type WorkerCPU struct {
	Decided int     `json:"decided"`
	CPUMs   float64 `json:"cpuMsPerDecision"`
	// PeakRSSMiB is the most resident memory one worker had during the
	// run (its 0.5 s samples).
	PeakRSSMiB float64 `json:"peakRssMiB,omitempty"`
}

// workerCPU is the workers' CPU per decision over the run: cpuS seconds
// over the decisions the queue samples saw (nil if none).
func (r *Report) workerCPU(cpuS float64) *WorkerCPU {
	first, last := -1.0, -1.0
	for _, q := range r.Queue {
		if q.Decided < 0 {
			continue
		}
		if first < 0 {
			first = q.Decided
		}
		last = q.Decided
	}
	if n := last - first; n > 0 && cpuS > 0 {
		return &WorkerCPU{Decided: int(n), CPUMs: 1000 * cpuS / n}
	}
	return nil
}

// Key names r as its plan does: its Name, and its round when repeated.
func (r *Report) Key() string { return Plan{Name: r.Name, Round: r.Round}.Key() }

// Summary is the text summary of r.
func (r *Report) Summary() string {
	var b strings.Builder
	model := fmt.Sprintf("closed model, %d concurrent users", r.Users)
	if r.Rate > 0 {
		model = fmt.Sprintf("open model, %d arrivals/s", r.Rate)
	}
	maxQ := 0
	for _, q := range r.Queue {
		maxQ = max(maxQ, q.Main)
	}
	round := ""
	if r.Round > 0 {
		round = fmt.Sprintf(", round %d", r.Round)
	}
	fmt.Fprintf(&b, "== %s (%s%s), event %s, capacity %d\n", r.Name, model, round, r.Event, r.Capacity)
	fmt.Fprintf(&b, "  ingest: %d sent, %d accepted (202) in %.1f s, %.0f req/s; latency p50 %.1f p95 %.1f p99 %.1f max %.1f ms\n",
		r.Sent, r.Accepted, r.AttackS, r.ThroughputRPS, r.P50Ms, r.P95Ms, r.P99Ms, r.MaxMs)
	fmt.Fprintf(&b, "  errors by status: %v\n", r.Errors)
	fmt.Fprintf(&b, "  E2E (client polling like the page, 202 → terminal seen): p50 %.0f p95 %.0f max %.0f ms; %d/%d terminal; drained %.1f s after the attack; queue peak %d\n",
		r.E2EP50Ms, r.E2EP95Ms, r.E2EMaxMs, r.Terminal, r.Accepted, r.DrainS, maxQ)
	b.WriteString(r.Polls.summary(r.Accepted))
	fmt.Fprintf(&b, "  results: %v\n", r.Results)
	fmt.Fprintf(&b, "  DLQ: %d at the start, peak %d, grew by %d\n", r.DeadStart, r.DeadPeak, r.DeadGrowth)
	fmt.Fprintf(&b, "  exact N: %v (SUCCEEDED %d, capacity remaining %d, invariant %v)\n", r.ExactN, r.Succeeded, r.CapacityRemaining, r.InvariantOK)
	for i, w := range []*RawRates{r.Raw, r.RawAfter} {
		if w == nil {
			continue
		}
		fmt.Fprintf(&b, "  stand-ins' raw rates %s (plain SDK loops, %s table): ingest %.0f/s at %d goroutines (tx p50 %.1f p95 %.1f ms, send p95 %.1f ms), worker (%s) %.0f/s at %d (%d allocator transactions, %d copies re-sent, %d promoted); both at once: ingest %.0f/s, worker %.0f/s, %d polls; %d errors %s\n",
			[]string{"before", "after"}[i], w.Table, w.IngestRPS, w.Concurrency, w.TxP50Ms, w.TxP95Ms, w.SendP95Ms, w.Ordering, w.WorkerRPS, w.WorkerConcurrency, w.AllocBatches, w.Resends, w.Promoted, w.PipelineIngestRPS, w.PipelineWorkerRPS, w.PipelinePolls, w.Errors, w.Error)
	}
	during := ""
	if r.DrainDuringIngest {
		during = " (backlog only during the attack)"
	}
	fmt.Fprintf(&b, "  worker drain: %.0f/s over %.1f s of backlog%s; at most %d worker processes ran\n", r.DrainRPS, r.DrainWindowS, during, r.PeakWorkers)
	fmt.Fprintf(&b, "  ratios to the raw rates (mean of before and after: ingest %.0f/s, worker %.0f/s, tx p95 %.1f ms): ingest %.2f, worker %.2f, ingest p95 %.1f×\n",
		r.RawIngestRPS, r.RawWorkerRPS, r.RawTxP95Ms, r.IngestRatio, r.WorkerRatio, r.P95TxRatio)
	if r.PipelineIngestRatio > 0 {
		fmt.Fprintf(&b, "  ingest against the raw ingest loop while the raw worker loop drains and its requests are polled (%.0f/s, as the product's ingest runs): %.2f; ingest p95 %.2f× the raw pipeline's (%.0f ms)\n",
			r.RawPipelineIngestRPS, r.PipelineIngestRatio, r.P95PipelineRatio, r.RawPipelineIngestP95Ms)
	}
	if a := r.API; a != nil {
		raw := ""
		if r.Raw != nil && r.Raw.TxMeanMs > 0 {
			raw = fmt.Sprintf("; the raw ingest loop's TransactWriteItems mean: %.0f ms before the run", r.Raw.TxMeanMs)
		}
		fmt.Fprintf(&b, "  in the API (its /metrics, %d ingests): %.0f ms per ingest, of which the stand-ins' calls %.0f ms (%.1f TransactWriteItems at %.0f ms mean, SendMessage %.1f ms) and Pacer's own code %.1f ms%s\n",
			a.Requests, a.HandlerMs, a.CallsMs, a.TxPerReq, a.TxMeanMs, a.SendMs, a.OwnMs, raw)
	}
	if a := r.API; a != nil && a.CPUMs > 0 {
		fmt.Fprintf(&b, "  CPU: the API process %.2f ms per participation (with its %.1f polls, %.1f table reads)", a.CPUMs, a.PollsPer, a.ReadsPer)
		if w := r.WorkerCPU; w != nil {
			fmt.Fprintf(&b, "; the workers %.2f ms per decision (%d decided)", w.CPUMs, w.Decided)
		}
		if a.RSSMiB > 0 {
			fmt.Fprintf(&b, "; memory: the API process %.0f MiB resident after the run", a.RSSMiB)
		}
		if w := r.WorkerCPU; w != nil && w.PeakRSSMiB > 0 {
			fmt.Fprintf(&b, ", a worker at most %.0f MiB", w.PeakRSSMiB)
		}
		fmt.Fprintf(&b, "; bare figures: make bench (docs/capacity.md)\n")
	}
	if a := r.API; a != nil && a.ConsumedCapacity {
		fmt.Fprintf(&b, "  note: the API asked DynamoDB for its calls' consumed capacity (PACER_CONSUMED_CAPACITY=true); DynamoDB Local computes it inside its table-wide write lock and the raw loops do not ask, so the ingest ratios include that cost (about 14 %% of transaction throughput)\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

// HTML is the report page: per run, a table and four charts (ingest
// latency per second, throughput per second, queue depth over time and
// the worker processes running over the same time).
func HTML(reports []*Report, rounds []*Rounds) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pacer load report</title>
<style>body{font:14px system-ui,sans-serif;margin:1.5rem;max-width:70rem}pre{background:#f6f8fa;padding:.6rem}svg{border:1px solid #d0d7de;margin:.3rem}h3{margin:.6rem 0 .2rem}</style></head><body><h1>Pacer load report</h1>`)
	if len(rounds) > 0 {
		b.WriteString("<h2>Medians over the rounds</h2><pre>")
		for _, g := range rounds {
			b.WriteString(html.EscapeString(g.Summary()))
		}
		b.WriteString("</pre>")
	}
	for _, r := range reports {
		fmt.Fprintf(&b, "<h2>%s</h2><pre>%s</pre>", html.EscapeString(r.Key()), html.EscapeString(r.Summary()))
		var p95, maxL, sent, ok []float64
		for _, s := range r.Seconds {
			p95, maxL, sent, ok = append(p95, s.P95Ms), append(maxL, s.MaxMs), append(sent, float64(s.Sent)), append(ok, float64(s.OK))
		}
		var qx, qm, qd, qw []float64
		for _, q := range r.Queue {
			qx, qm, qd, qw = append(qx, q.AtS), append(qm, float64(q.Main)), append(qd, float64(q.Dead)), append(qw, float64(max(0, q.Workers)))
		}
		b.WriteString("<h3>Ingest latency per second (ms): p95 blue, max red</h3>")
		b.WriteString(chart(seq(len(p95)), []series{{p95, "#0969da"}, {maxL, "#cf222e"}}, "s", "ms"))
		b.WriteString("<h3>Throughput per second: sent blue, 202 green</h3>")
		b.WriteString(chart(seq(len(sent)), []series{{sent, "#0969da"}, {ok, "#1a7f37"}}, "s", "req/s"))
		b.WriteString("<h3>Queue depth (main blue, DLQ red): the drain curve</h3>")
		b.WriteString(chart(qx, []series{{qm, "#0969da"}, {qd, "#cf222e"}}, "s", "messages"))
		b.WriteString("<h3>Worker processes running (same time axis)</h3>")
		b.WriteString(chart(qx, []series{{qw, "#8250df"}}, "s", "workers"))
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

type series struct {
	y     []float64
	color string
}

func seq(n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i)
	}
	return x
}

// chart draws the series as polylines over x in an inline SVG.
func chart(x []float64, ss []series, xUnit, yUnit string) string {
	const w, h, pad = 640.0, 200.0, 40.0
	maxX, maxY := 1.0, 1.0
	for _, v := range x {
		maxX = max(maxX, v)
	}
	for _, s := range ss {
		for _, v := range s.y {
			maxY = max(maxY, v)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`, w, h, w, h)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#888"/>`,
		pad, h-pad, w-10, h-pad, pad, 10.0, pad, h-pad)
	fmt.Fprintf(&b, `<text x="2" y="18" font-size="11">%.0f %s</text><text x="%.0f" y="%.0f" font-size="11">%.0f %s</text><text x="%.0f" y="%.0f" font-size="11">0</text>`,
		maxY, yUnit, w-80, h-pad+16, maxX, xUnit, pad-4, h-pad+16)
	for _, s := range ss {
		var pts []string
		for i, v := range s.y {
			if i >= len(x) {
				break
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", pad+x[i]/maxX*(w-pad-10), h-pad-v/maxY*(h-pad-10)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`, s.color, strings.Join(pts, " "))
	}
	b.WriteString("</svg>")
	return b.String()
}
