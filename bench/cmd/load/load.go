package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Run runs the load cfg describes: it checks the flags, reads the stack,
// runs every plan (-repeat rounds of them), prints and writes the reports.
// Its error is an exitError when the load cannot start, errFailed when a
// run stopped or missed its thresholds.
func Run(ctx context.Context, cfg Config) error {
	th, plans, err := cfg.prepare()
	if err != nil {
		return err
	}
	c := newClient(strings.TrimSuffix(cfg.Target, "/"))
	runID := strconv.FormatInt(time.Now().Unix(), 36)
	s, err := newSession(ctx, cfg, c, runID)
	if err != nil {
		return err
	}
	if err := s.warm(ctx, plans); err != nil {
		return err
	}
	reports, stopped := s.runAll(ctx, cfg.rounds(plans), th)
	var rounds []*Rounds
	if cfg.Repeat > 1 {
		rounds = roundsOf(reports)
		for _, g := range rounds {
			g.Check(th)
			fmt.Print(g.Summary())
		}
	}
	if err := write(cfg.Out, reports, rounds); err != nil {
		return err
	}
	scriptedFailed := false
	if cfg.Scripted.People > 0 && stopped == nil {
		sc, err := scripted(ctx, c, cfg.Scripted, s.st, runID)
		if err != nil {
			return err
		}
		if th != nil {
			sc.Check(th.MaxScriptedP95Ratio)
		} else {
			sc.Check(0)
		}
		fmt.Print(sc.Summary())
		if err := writeScripted(cfg.Out, sc); err != nil {
			return err
		}
		for _, f := range sc.Failed {
			fmt.Printf("FAIL: scripted clients: %s\n", f)
			scriptedFailed = true
		}
	}
	if failed(reports) || stopped != nil || scriptedFailed {
		return errFailed
	}
	return nil
}

// writeScripted writes the scripted-client scenario's report to
// <out>/scripted.json.
func writeScripted(out string, sc *Scripted) error {
	b, _ := json.MarshalIndent(sc, "", "  ") // plain data
	path := filepath.Join(out, "scripted.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	fmt.Printf("Wrote %s\n", path)
	return nil
}

// prepare checks the flags that need no network and reads the thresholds
// file and the plans they name.
func (cfg Config) prepare() (*Thresholds, []Plan, error) {
	if err := checkTarget(cfg.Target, cfg.AllowRemote); err != nil {
		return nil, nil, &exitError{code: 2, err: err}
	}
	if cfg.Repeat < 1 {
		return nil, nil, usage("-repeat %d: want 1 or more rounds", cfg.Repeat)
	}
	var th *Thresholds
	if cfg.Thresholds != "" {
		b, err := os.ReadFile(cfg.Thresholds)
		if err != nil {
			return nil, nil, usage("thresholds: %w", err)
		}
		th = &Thresholds{}
		if err := json.Unmarshal(b, th); err != nil {
			return nil, nil, usage("thresholds: %w", err)
		}
	}
	plans, err := cfg.plans()
	return th, plans, err
}

// plans are the closed runs (-closed) then the spike (-spike-rate), with
// the polls' settings.
func (cfg Config) plans() ([]Plan, error) {
	var plans []Plan
	for _, f := range strings.Split(cfg.Closed, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, usage("-closed: %q is not a user count", f)
		}
		plans = append(plans, Plan{Name: fmt.Sprintf("closed-%d", n), Users: n, Requests: n * cfg.PerUser})
	}
	if cfg.SpikeRate > 0 {
		plans = append(plans, Plan{Name: fmt.Sprintf("spike-%drps", cfg.SpikeRate), Rate: cfg.SpikeRate, For: cfg.SpikeFor, Requests: int(float64(cfg.SpikeRate) * cfg.SpikeFor.Seconds())})
	}
	for i := range plans {
		plans[i].PollInflight, plans[i].PollAfter = cfg.PollInflight, !cfg.PollDuring
	}
	return plans, nil
}

// rounds are the plans repeated -repeat times, each numbered with its
// round when there is more than one.
func (cfg Config) rounds(plans []Plan) []Plan {
	var runs []Plan
	for round := 1; round <= cfg.Repeat; round++ {
		for _, p := range plans {
			if cfg.Repeat > 1 {
				p.Round = round
			}
			runs = append(runs, p)
		}
	}
	return runs
}

// write writes the reports to <out>/load.json and <out>/load.html, and
// the rounds, if any, to <out>/rounds.json.
func write(out string, reports []*Report, rounds []*Rounds) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	jb, _ := json.MarshalIndent(reports, "", "  ") // plain data
	jsonPath, htmlPath := filepath.Join(out, "load.json"), filepath.Join(out, "load.html")
	if err := os.WriteFile(jsonPath, jb, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(htmlPath, []byte(HTML(reports, rounds)), 0o644); err != nil {
		return err
	}
	fmt.Printf("Wrote %s and %s\n", jsonPath, htmlPath)
	if rounds != nil {
		rb, _ := json.MarshalIndent(rounds, "", "  ") // plain data
		roundsPath := filepath.Join(out, "rounds.json")
		if err := os.WriteFile(roundsPath, rb, 0o644); err != nil {
			return err
		}
		fmt.Printf("Wrote %s\n", roundsPath)
	}
	return nil
}

// failed prints a FAIL line for each run that missed a threshold, and
// says whether there was one (the rounds' medians are informational).
func failed(reports []*Report) bool {
	failed := false
	for _, r := range reports {
		if len(r.Failed) > 0 {
			fmt.Printf("FAIL: %s: %s\n", r.Key(), strings.Join(r.Failed, "; "))
			failed = true
		}
	}
	return failed
}
