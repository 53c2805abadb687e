package main

import (
	"strings"
	"testing"
)

func TestDeadLettersAndMaxDead(t *testing.T) {
	zero := 0
	for _, c := range []struct {
		name          string
		dead          []int
		th            Thresholds
		start, peak   int
		growth        int
		wantDLQFailed bool
	}{
		{"unchanged", []int{2, 2, 2}, Thresholds{MaxDead: &zero}, 2, 2, 0, false},
		{"grew then redriven", []int{2, 5, 1}, Thresholds{MaxDead: &zero}, 2, 5, 3, true},
		{"grew, not checked", []int{0, 4}, Thresholds{}, 0, 4, 4, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &Report{}
			for i, d := range c.dead {
				r.Queue = append(r.Queue, QueueSample{AtS: float64(i), Dead: d})
			}
			r.deadLetters()
			if r.DeadStart != c.start || r.DeadPeak != c.peak || r.DeadGrowth != c.growth {
				t.Errorf("start %d peak %d growth %d, want %d %d %d", r.DeadStart, r.DeadPeak, r.DeadGrowth, c.start, c.peak, c.growth)
			}
			r.Check(&c.th)
			failed := strings.Contains(strings.Join(r.Failed, ";"), "DLQ")
			if failed != c.wantDLQFailed {
				t.Errorf("failed %v, want a DLQ failure %v", r.Failed, c.wantDLQFailed)
			}
			if !strings.Contains(r.Summary(), "DLQ:") {
				t.Errorf("summary has no DLQ line:\n%s", r.Summary())
			}
		})
	}
}

// The drain rate counts decided requests over the intervals after the
// attack that began with decisions still to come.
func TestDrainRate(t *testing.T) {
	r := &Report{AttackS: 1, Queue: []QueueSample{
		{AtS: 0, Main: 50, Decided: 0}, {AtS: 1, Main: 40, Decided: 10},
		{AtS: 2, Main: 20, Decided: 30}, {AtS: 3, Main: 0, Decided: 50}, {AtS: 4, Main: 0, Decided: 50},
	}}
	r.drainRate()
	if r.DrainRPS != 20 || r.DrainWindowS != 2 || r.DrainDuringIngest {
		t.Errorf("drain %v/s over %v s (during ingest %v), want 20/s over 2 s after the attack", r.DrainRPS, r.DrainWindowS, r.DrainDuringIngest)
	}
	// An arrival allocator's first decision waits MaxLateness: the
	// intervals before it (earlier runs' 900 decisions) are not drain.
	r = &Report{AttackS: 1, Queue: []QueueSample{
		{AtS: 0, Main: 50, Decided: 900}, {AtS: 1, Main: 50, Decided: 900}, {AtS: 2, Main: 50, Decided: 900},
		{AtS: 3, Main: 30, Decided: 930}, {AtS: 4, Main: 0, Decided: 950}, {AtS: 5, Main: 0, Decided: 950},
	}}
	r.drainRate()
	if r.DrainRPS != 25 || r.DrainWindowS != 2 {
		t.Errorf("drain %v/s over %v s, want 25/s over the 2 s from the first decision", r.DrainRPS, r.DrainWindowS)
	}
}

// When more workers ran than before the run, the worker ratio is against
// the raw loop after the run alone; ingest against the mean.
func TestRatiosWorkerAfter(t *testing.T) {
	r := &Report{Users: 10, ThroughputRPS: 80, DrainRPS: 90, P95Ms: 30, PeakWorkers: 3,
		Raw:      &RawRates{IngestRPS: 100, WorkerRPS: 50, TxP95Ms: 10, WorkerConcurrency: 10},
		RawAfter: &RawRates{IngestRPS: 100, WorkerRPS: 100, TxP95Ms: 20, WorkerConcurrency: 30}}
	r.ratios()
	if r.IngestRatio != 0.8 || r.WorkerRatio != 0.9 || r.P95TxRatio != 2 {
		t.Errorf("ratios ingest %v worker %v p95 %v, want 0.8 0.9 2", r.IngestRatio, r.WorkerRatio, r.P95TxRatio)
	}
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "3 workers") {
		t.Errorf("notes %v: want the worker ratio explained", r.Notes)
	}
	r.Notes = nil
	r.Check(&Thresholds{MinIngestRatio: 0.85, MinWorkerRatio: 0.8})
	if len(r.Failed) != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "informational: ingest") {
		t.Errorf("failed %v, notes %v: want the ingest ratio only, as an informational note", r.Failed, r.Notes)
	}
}

// The pipeline ratios are ingest and its p95 against the mean of the raw
// loops run at once (the same concurrent work as the run), each checked by
// its own threshold beside the ingest-loop-alone ratio.
func TestPipelineIngestRatio(t *testing.T) {
	r := &Report{Users: 10, ThroughputRPS: 80, P95Ms: 300,
		Raw:      &RawRates{IngestRPS: 200, PipelineIngestRPS: 90, PipelineIngestP95Ms: 200, WorkerConcurrency: 10},
		RawAfter: &RawRates{IngestRPS: 200, PipelineIngestRPS: 110, PipelineIngestP95Ms: 300, WorkerConcurrency: 10}}
	r.ratios()
	if r.IngestRatio != 0.4 || r.RawPipelineIngestRPS != 100 || r.PipelineIngestRatio != 0.8 || r.RawPipelineIngestP95Ms != 250 || r.P95PipelineRatio != 1.2 {
		t.Errorf("ingest ratio %v, pipeline %v/s ratio %v, pipeline p95 %v ms ratio %v; want 0.4, 100/s, 0.8, 250 ms, 1.2",
			r.IngestRatio, r.RawPipelineIngestRPS, r.PipelineIngestRatio, r.RawPipelineIngestP95Ms, r.P95PipelineRatio)
	}
	if !strings.Contains(r.Summary(), "while the raw worker loop drains and its requests are polled (100/s, as the product's ingest runs): 0.80; ingest p95 1.20× the raw pipeline's (250 ms)") {
		t.Errorf("summary lacks the pipeline ratios:\n%s", r.Summary())
	}
	r.Notes = nil
	r.Check(&Thresholds{MinIngestRatio: 0.5, MinPipelineIngestRatio: 0.8, MaxP95PipelineRatio: 1.2})
	if len(r.Failed) != 0 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "0.40") {
		t.Errorf("failed %v, notes %v: want the ingest-loop-alone ratio (0.40) only, noted", r.Failed, r.Notes)
	}
	r.Notes = nil
	r.Check(&Thresholds{MinPipelineIngestRatio: 0.85, MaxP95PipelineRatio: 1.1})
	if len(r.Failed) != 0 || len(r.Notes) != 2 || !strings.Contains(r.Notes[0], "0.80 of the raw pipeline") || !strings.Contains(r.Notes[1], "1.20×") {
		t.Errorf("failed %v, notes %v: want the pipeline ratio (0.80 < 0.85) and its p95 (1.20× > 1.10×), noted", r.Failed, r.Notes)
	}
}

// Pacer's own CPU per operation decides a run: the API's per
// participation (with its polls) and the workers' per decision, each
// against its threshold; a figure not read is not checked.
func TestCPUThresholds(t *testing.T) {
	r := &Report{Sent: 10, Accepted: 10, Terminal: 10, ExactN: true,
		API:   &IngestSplit{Requests: 1000, CPUMs: 6.6, PollsPer: 7.6, ReadsPer: 5.2},
		Queue: []QueueSample{{Decided: -1}, {Decided: 100}, {Decided: 600}, {Decided: 1100}}}
	r.WorkerCPU = r.workerCPU(4.0)
	if w := r.WorkerCPU; w == nil || w.Decided != 1000 || w.CPUMs != 4 {
		t.Fatalf("worker CPU %+v, want 4 s over the 1000 decisions sampled: 4 ms each", w)
	}
	r.Check(&Thresholds{ExactN: true, MaxAPICPUMs: 7, MaxWorkerCPUMs: 5})
	if len(r.Failed) != 0 {
		t.Errorf("within both bounds: failed %v", r.Failed)
	}
	r.Check(&Thresholds{ExactN: true, MaxAPICPUMs: 5, MaxWorkerCPUMs: 3})
	if len(r.Failed) != 2 || !strings.Contains(r.Failed[0], "6.60 ms of CPU per participation (with 7.6 polls each) > 5.00") || !strings.Contains(r.Failed[1], "4.00 ms of CPU per decision > 3.00") {
		t.Errorf("failed %v, want both CPU figures over their bounds", r.Failed)
	}
	if s := r.Summary(); !strings.Contains(s, "CPU: the API process 6.60 ms per participation (with its 7.6 polls, 5.2 table reads); the workers 4.00 ms per decision (1000 decided)") {
		t.Errorf("summary lacks the CPU figures:\n%s", s)
	}
	if (&Report{}).workerCPU(4) != nil {
		t.Error("a run without decisions has a CPU per decision")
	}
}
