package main

import (
	"strings"
	"testing"
)

// A -repeat run checks each run's own thresholds on the run and notes the
// ratio thresholds on each plan's medians (informational): one unlucky
// round is not noted, a low median is, and a ratio no round measured is
// not checked.
func TestRoundsMedians(t *testing.T) {
	th := &Thresholds{ExactN: true, MinPipelineIngestRatio: 0.8, MaxP95PipelineRatio: 1.25, MinWorkerRatio: 0.8}
	run := func(name string, round int, pipe, p95, worker float64) *Report {
		r := &Report{Name: name, Round: round, Sent: 10, Accepted: 10, Terminal: 10, ExactN: true}
		r.PipelineIngestRatio, r.P95PipelineRatio, r.WorkerRatio = pipe, p95, worker
		return r
	}
	reports := []*Report{
		run("closed-200", 1, 0.70, 1.40, 0.90), run("spike-300rps", 1, 0, 0, 0.60),
		run("closed-200", 2, 0.90, 1.10, 0.95), run("spike-300rps", 2, 0, 0, 0.70),
		run("closed-200", 3, 0.85, 1.20, 0), run("spike-300rps", 3, 0, 0, 0.90),
	}
	for _, r := range reports {
		r.CheckRun(th)
		if len(r.Failed) > 0 {
			t.Errorf("%s: CheckRun failed %v, want no ratio checked per run", r.Key(), r.Failed)
		}
	}
	rounds := roundsOf(reports)
	if len(rounds) != 2 || rounds[0].Name != "closed-200" || rounds[1].Name != "spike-300rps" || len(rounds[0].Rounds) != 3 {
		t.Fatalf("rounds %+v, want closed-200 then spike-300rps, 3 rounds each", rounds)
	}
	closed, spike := rounds[0], rounds[1]
	if m := closed.Median; m.PipelineIngestRatio != 0.85 || m.P95PipelineRatio != 1.20 || m.WorkerRatio != (0.90+0.95)/2 {
		t.Errorf("closed-200 medians %+v, want pipeline 0.85, p95 1.20, worker 0.925 (of the two rounds that measured it)", m)
	}
	closed.Check(th)
	spike.Check(th)
	if len(closed.Notes) != 0 {
		t.Errorf("closed-200 noted %v, want none: round 1 missed every goal, the medians meet them", closed.Notes)
	}
	if len(spike.Notes) != 1 || !strings.Contains(spike.Notes[0], "informational: median worker drain") || !strings.Contains(spike.Notes[0], "0.700 (rounds 0.60 0.70 0.90) < 0.80") {
		t.Errorf("spike noted %v, want its worker median 0.700 < 0.80 with the rounds' values", spike.Notes)
	}
	if s := closed.Summary(); !strings.Contains(s, "ingest / the raw pipeline's: 0.70 0.90 0.85 → 0.85") || strings.Contains(s, "raw ingest loop's alone") {
		t.Errorf("summary %q: want the pipeline ratio per round and its median, and no line for a ratio not measured", s)
	}
	if a, b := (Plan{Name: "closed-200", Round: 1}).Key(), (Plan{Name: "closed-200", Round: 2}).Key(); a == b || (Plan{Name: "closed-200"}).Key() != "closed-200" {
		t.Errorf("keys %q and %q: each round needs its own event and users; a single run keeps its name", a, b)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		vs   []float64
		want float64
	}{{nil, 0}, {[]float64{0.5}, 0.5}, {[]float64{0.9, 0.1, 0.5}, 0.5}, {[]float64{0.9, 0.1, 0.5, 0.7}, 0.6}} {
		if got := median(c.vs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.vs, got, c.want)
		}
	}
}
