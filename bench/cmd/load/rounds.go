package main

import (
	"fmt"
	"slices"
	"strings"
)

// Rounds is one plan over the rounds of a -repeat run: each round's
// ratios and their medians. One run's ratios spread widely on a small
// machine (0.63 to 0.99 for the same code, minutes apart, on 2 cores), so
// a ratio threshold checked on one run is close to a coin toss near its
// bound; a -repeat run checks the medians instead.
type Rounds struct {
	Name   string   `json:"name"`
	Rounds []Ratios `json:"rounds"`
	Median Ratios   `json:"median"`
	// Notes are the ratio thresholds the medians miss: informational
	// (Report.checkRatios says why).
	Notes []string `json:"notes,omitempty"`
}

// ratioKind is one of the Ratios, with its threshold. ratioKinds is the
// one list of them: a run's check (Report.checkRatios), the rounds'
// medians (Rounds.Check) and the summaries all range over it.
type ratioKind struct {
	what  string
	of    func(*Ratios) *float64
	bound func(*Thresholds) float64
	upper bool // the threshold is a maximum (else a minimum)
	// failed says how one run misses bound, with the run's own figures.
	failed func(r *Report, bound float64) string
}

// misses reports whether v breaks bound (0 for either: not checked).
func (k ratioKind) misses(v, bound float64) bool {
	if bound <= 0 || v <= 0 {
		return false
	}
	if k.upper {
		return v > bound
	}
	return v < bound
}

var ratioKinds = []ratioKind{
	{"ingest / the raw pipeline's", func(r *Ratios) *float64 { return &r.PipelineIngestRatio }, func(t *Thresholds) float64 { return t.MinPipelineIngestRatio }, false,
		func(r *Report, b float64) string {
			return fmt.Sprintf("ingest %.0f req/s is %.2f of the raw pipeline's %.0f/s < %.2f", r.ThroughputRPS, r.PipelineIngestRatio, r.RawPipelineIngestRPS, b)
		}},
	{"ingest p95 / the raw pipeline's", func(r *Ratios) *float64 { return &r.P95PipelineRatio }, func(t *Thresholds) float64 { return t.MaxP95PipelineRatio }, true,
		func(r *Report, b float64) string {
			return fmt.Sprintf("ingest p95 is %.2f× the raw pipeline's ingest p95 (%.1f ms) > %.2f×", r.P95PipelineRatio, r.RawPipelineIngestP95Ms, b)
		}},
	{"worker drain / the raw worker loop's", func(r *Ratios) *float64 { return &r.WorkerRatio }, func(t *Thresholds) float64 { return t.MinWorkerRatio }, false,
		func(r *Report, b float64) string {
			return fmt.Sprintf("worker drain %.0f/s is %.2f of the stand-ins' %.0f/s < %.2f", r.DrainRPS, r.WorkerRatio, r.RawWorkerRPS, b)
		}},
	{"ingest / the raw ingest loop's alone", func(r *Ratios) *float64 { return &r.IngestRatio }, func(t *Thresholds) float64 { return t.MinIngestRatio }, false,
		func(r *Report, b float64) string {
			return fmt.Sprintf("ingest %.0f req/s is %.2f of the stand-ins' %.0f/s < %.2f", r.ThroughputRPS, r.IngestRatio, r.RawIngestRPS, b)
		}},
	{"ingest p95 / the raw transaction p95", func(r *Ratios) *float64 { return &r.P95TxRatio }, func(t *Thresholds) float64 { return t.MaxP95TxRatio }, true,
		func(r *Report, b float64) string {
			return fmt.Sprintf("ingest p95 is %.1f× the raw transaction p95 (%.1f ms) > %.1f×", r.P95TxRatio, r.RawTxP95Ms, b)
		}},
}

// roundsOf groups reports by plan, in the order the plans first ran, and
// takes each ratio's median over the rounds that measured it.
func roundsOf(reports []*Report) []*Rounds {
	var out []*Rounds
	by := map[string]*Rounds{}
	for _, r := range reports {
		g := by[r.Name]
		if g == nil {
			g = &Rounds{Name: r.Name}
			by[r.Name] = g
			out = append(out, g)
		}
		g.Rounds = append(g.Rounds, r.Ratios)
	}
	for _, g := range out {
		for _, k := range ratioKinds {
			*k.of(&g.Median) = median(g.values(k))
		}
	}
	return out
}

// values are the rounds' measured (non-zero) values of k, in round order.
func (g *Rounds) values(k ratioKind) []float64 {
	var vs []float64
	for i := range g.Rounds {
		if v := *k.of(&g.Rounds[i]); v > 0 {
			vs = append(vs, v)
		}
	}
	return vs
}

// median is the middle of vs (the mean of the middle two for an even
// count; 0 for none).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(vs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Check notes the ratio thresholds g's medians miss (a ratio no round
// measured is not checked): informational, as a run's are.
func (g *Rounds) Check(th *Thresholds) {
	if th == nil {
		return
	}
	for _, k := range ratioKinds {
		v, bound := *k.of(&g.Median), k.bound(th)
		if !k.misses(v, bound) {
			continue
		}
		rel := "<"
		if k.upper {
			rel = ">"
		}
		g.Notes = append(g.Notes, fmt.Sprintf("informational: median %s %.3f (rounds %s) %s %.2f", k.what, v, list(g.values(k)), rel, bound))
	}
}

// Summary is the text summary of g: each measured ratio per round and
// its median.
func (g *Rounds) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "== %s over %d rounds: ratios per round → median\n", g.Name, len(g.Rounds))
	for _, k := range ratioKinds {
		if vs := g.values(k); len(vs) > 0 {
			fmt.Fprintf(&b, "  %s: %s → %.2f\n", k.what, list(vs), *k.of(&g.Median))
		}
	}
	for _, n := range g.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

func list(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(s, " ")
}
