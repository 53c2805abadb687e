package stack

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/internal/repo"
	"github.com/pacerhq/pacer/sdk/autoscale"
)

// spikeMessages is docs/autoscaling.md's worked example: 50 200 messages,
// 9 workers' worth at the production settings.
const spikeMessages = 50_200

// simRun is one worker path's simulation over every phase of its
// periodic processes.
type simRun struct {
	path        string
	worst, mean float64 // seconds to the first new task
	drained     float64 // mean seconds to an empty queue
	atMin       float64 // mean seconds until the pool is back to Min for good
	desired     []int   // the desired counts of the worst run
}

// simulatePaths runs the three worker paths over all their phases.
func simulatePaths() []simRun {
	var spike, tracking []simPhases
	for p := range int(autoscale.PublishEvery / time.Second) {
		for f := range int(awslogsFlush / time.Second) {
			for a := range int(highResEvaluation / time.Second) {
				spike = append(spike, simPhases{publish: p, flush: f, alarm: a})
			}
		}
	}
	for m := range int(minutePeriod / time.Second) {
		for e := range int(minutePeriod / time.Second) {
			tracking = append(tracking, simPhases{minute: m, evaluate: e})
		}
	}
	prescale := autoscale.Desired(alarm.Defaults().Scaling, autoscale.Load{Visible: spikeMessages})
	return []simRun{
		summarize(PathWorkerTracking, tracking, func(ph simPhases) simResult { return simulate(spikeMessages, false, 0, ph) }),
		summarize(PathWorkerSpike, spike, func(ph simPhases) simResult { return simulate(spikeMessages, true, 0, ph) }),
		summarize(PathWorkerPrescale, spike, func(ph simPhases) simResult { return simulate(spikeMessages, true, prescale, ph) }),
	}
}

func summarize(path string, phases []simPhases, run func(simPhases) simResult) simRun {
	r := simRun{path: path}
	for _, ph := range phases {
		res := run(ph)
		if float64(res.firstNew) >= r.worst {
			r.worst, r.desired = float64(res.firstNew), res.desired
		}
		n := float64(len(phases))
		r.mean += float64(res.firstNew) / n
		r.drained += float64(res.drained) / n
		r.atMin += float64(res.atMin) / n
	}
	return r
}

// The simulation of each worker path, over every phase, takes as long as
// the model says to the first new task: the same worst case and the same
// average. The model adds up stages; the simulation runs the mechanism
// (buckets, ticks, datapoints to alarm, cooldowns, sdk/autoscale's held
// recommendation) and only the stages' figures are shared.
func TestSpikeModelMatchesSimulation(t *testing.T) {
	model := map[string]Path{}
	for _, p := range SpikePaths() {
		model[p.Name] = p
	}
	for _, r := range simulatePaths() {
		p := model[r.path]
		t.Logf("%s: first new task %.1f s worst, %.2f s average; drained at %.0f s, back to Min at %.0f s (averages); desired %v",
			r.path, r.worst, r.mean, r.drained, r.atMin, r.desired)
		if r.worst != p.Worst().Seconds() || fmt.Sprintf("%.2f", r.mean) != fmt.Sprintf("%.2f", p.Mean().Seconds()) {
			t.Errorf("%s: simulated %v s worst, %.2f s average; the model says %v, %v", r.path, r.worst, r.mean, p.Worst(), p.Mean())
		}
	}
}

// docs/autoscaling.md carries the model's table as SpikeTable writes it.
func TestSpikeTableInDocs(t *testing.T) {
	doc, err := repo.ReadFile("docs", "autoscaling.md")
	if err != nil {
		t.Fatal(err)
	}
	if table := SpikeTable(SpikePaths()); !strings.Contains(string(doc), table) {
		t.Errorf("docs/autoscaling.md lacks the spike table; paste:\n\n%s", table)
	}
}

// simTable is docs/autoscaling.md's table of the simulation's runs.
func simTable(runs []simRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Worker path, simulated (%d %03d messages at once) | First new task: worst, average | Queue empty (average) | Back to Min (average) | Desired counts (worst run) |\n|---|---|---|---|---|\n", spikeMessages/1000, spikeMessages%1000)
	for _, r := range runs {
		fmt.Fprintf(&b, "| %s | %.0f s, %s | %.0f s | %.0f s | %v |\n", r.path, r.worst,
			strings.TrimSuffix(fmt.Sprintf("%.1f", r.mean), ".0")+" s", r.drained, r.atMin, r.desired)
	}
	return b.String()
}

// docs/autoscaling.md carries the simulation's figures.
func TestSimTableInDocs(t *testing.T) {
	doc, err := repo.ReadFile("docs", "autoscaling.md")
	if err != nil {
		t.Fatal(err)
	}
	if table := simTable(simulatePaths()); !strings.Contains(string(doc), table) {
		t.Errorf("docs/autoscaling.md lacks the simulation's table; paste:\n\n%s", table)
	}
}
