package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/deploy/stack"
)

// planning holds docs/capacity.md's planning figures (Sizing per vCPU):
// what Pacer's processes spend per operation as `make load` measured it
// over loopback sockets (real HTTP, its clients' polls), rounded up, and
// the table's default write quota in participations. The sizing table
// there is rendered from them and the generated defaults
// (TestDefaultsCarryTheClaimedRate).
var planning = struct {
	// apiCPU is the AsyncEvent API's CPU per participation, with the
	// polls its client makes (polls of them).
	apiCPU time.Duration
	polls  float64
	// workerCPU is a worker's CPU per decision.
	workerCPU time.Duration
	// workerCPUShare is the most of a worker task's CPU its planned drain
	// (concurrency / processing time) may take: the rest is the headroom
	// for a slower table, retries and the periodic jobs.
	workerCPUShare float64
	// apiRSSMiB and workerRSSMiB are the most resident memory measured
	// (the API after a 500-user run, a worker at its peak); a task gets
	// at least twice that (Go's heap may double before a collection).
	apiRSSMiB, workerRSSMiB float64
	// tableRate is the participations per second an on-demand table's
	// default quota (40,000 WCU/s at ~22 WCU each) lets through: the rate
	// the generated defaults must carry, since nothing more gets in
	// without a quota increase (docs/capacity.md, Per table).
	tableRate float64
}{
	apiCPU: 5500 * time.Microsecond, polls: 6.7,
	workerCPU: 3 * time.Millisecond, workerCPUShare: 0.7,
	apiRSSMiB: 140, workerRSSMiB: 30,
	tableRate: 1800,
}

// sizing is one service's row of the sizing table.
type sizing struct {
	name    string
	sv      stack.Service
	lo, hi  int     // its default task bounds
	perTask float64 // participations (decisions) per second one task takes
	why     string  // what perTask follows from
}

func vcpu(sv stack.Service) float64 { return float64(sv.CPU) / 1024 }

// apiSizing is the AsyncEvent API's row: a task takes what its CPU target
// leaves at planning.apiCPU a participation.
func apiSizing(sv stack.Service) sizing {
	a := sv.Autoscale
	per := vcpu(sv) * a.CPUPercent / 100 / planning.apiCPU.Seconds()
	return sizing{name: "AsyncEvent API", sv: sv, lo: a.Min, hi: a.Max, perTask: per,
		why: fmt.Sprintf("%.0f %% CPU at %.1f ms a participation with its %.1f polls", a.CPUPercent, ms(planning.apiCPU), planning.polls)}
}

// workerSizing is the worker's row: a task drains its concurrency every
// processing time (the autoscaler's planning figure), which must fit its
// CPU at planning.workerCPU a decision.
func workerSizing(spec *stack.Spec, sv stack.Service) sizing {
	sc := spec.Scaling
	per := float64(sc.Concurrency) / sc.ProcessingTime.Seconds()
	share := per * planning.workerCPU.Seconds() / vcpu(sv)
	return sizing{name: "worker", sv: sv, lo: sc.Min, hi: sc.Max, perTask: per,
		why: fmt.Sprintf("concurrency %d at %.0f ms a message; %.0f %% CPU at %.1f ms a decision", sc.Concurrency, ms(sc.ProcessingTime), 100*share, ms(planning.workerCPU))}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tasks is how many tasks of z take rate per second.
func (z sizing) tasks(rate float64) int { return int(math.Ceil(rate / z.perTask)) }

// row is z's line of the sizing table.
func (z sizing) row() string {
	return fmt.Sprintf("| %s | %s vCPU, %s MiB | %s/s (%s) | %d | %d | %d–%d | %s/s |", z.name, trim(vcpu(z.sv)), thousands(float64(z.sv.MemoryMiB)),
		thousands(z.perTask), z.why, z.tasks(1000), z.tasks(10000), z.lo, z.hi, thousands(z.perTask*float64(z.hi)))
}

func trim(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// thousands writes f rounded down, with thousands separators.
func thousands(f float64) string {
	s := fmt.Sprint(int(f))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// sizingTable is docs/capacity.md's sizing table for spec.
func sizingTable(spec *stack.Spec) (string, []sizing) {
	var rows []sizing
	for _, sv := range spec.Services {
		switch sv.Name {
		case AsyncAPI:
			rows = append(rows, apiSizing(sv))
		case Worker:
			rows = append(rows, workerSizing(spec, sv))
		}
	}
	lines := []string{
		"| service | task | one task takes | tasks for 1,000/s | tasks for 10,000/s | default bounds | the bounds carry |",
		"|---|---|---|---|---|---|---|",
	}
	for _, z := range rows {
		lines = append(lines, z.row())
	}
	return strings.Join(lines, "\n"), rows
}

// The generated defaults carry the rate docs/capacity.md claims for them
// (the table's default quota, planning.tableRate) at the planning
// figures, with no timing here: the API's task bounds at its CPU target,
// the worker's at its planned drain, which must fit its CPU; the API's
// request-count target scales out before its CPU target is passed, and
// not at under half of it; each task has twice the memory measured. The
// sizing table in docs/capacity.md is the one these figures give.
func TestDefaultsCarryTheClaimedRate(t *testing.T) {
	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	table, rows := sizingTable(spec)
	if len(rows) != 2 {
		t.Fatalf("sizing rows for %d services, want the API's and the worker's", len(rows))
	}
	for _, z := range rows {
		if carry := z.perTask * float64(z.hi); carry < planning.tableRate {
			t.Errorf("%s: %d tasks at %.0f/s each carry %.0f/s, under the %.0f/s claimed (raise its Max or its task size)", z.name, z.hi, z.perTask, carry, planning.tableRate)
		}
	}
	api, worker := rows[0], rows[1]
	if a := api.sv.Autoscale; a != nil {
		atTarget := api.perTask * (1 + planning.polls) * 60
		if a.RequestsPerTask > atTarget || a.RequestsPerTask < atTarget/2 {
			t.Errorf("the API's RequestsPerTask %.0f: a task at its CPU target serves %.0f requests a minute (participations and polls); want between half that and that", a.RequestsPerTask, atTarget)
		}
	}
	if share := worker.perTask * planning.workerCPU.Seconds() / vcpu(worker.sv); share > planning.workerCPUShare {
		t.Errorf("the worker's planned drain (%.0f/s a task) takes %.0f %% of its %s vCPU at %.1f ms a decision, over %.0f %%",
			worker.perTask, 100*share, trim(vcpu(worker.sv)), ms(planning.workerCPU), 100*planning.workerCPUShare)
	}
	for _, m := range []struct {
		z   sizing
		rss float64
	}{{api, planning.apiRSSMiB}, {worker, planning.workerRSSMiB}} {
		if float64(m.z.sv.MemoryMiB) < 2*m.rss {
			t.Errorf("%s: %d MiB a task, under twice the %.0f MiB measured", m.z.name, m.z.sv.MemoryMiB, m.rss)
		}
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "capacity.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), table+"\n") {
		t.Errorf("docs/capacity.md's sizing table is not what the defaults and planning figures give; it should read:\n%s", table)
	}
	claim := fmt.Sprintf("carry **%s participations/s**", thousands(planning.tableRate))
	if !strings.Contains(string(doc), claim) {
		t.Errorf("docs/capacity.md does not claim what this test holds the defaults to: %q", claim)
	}
}
