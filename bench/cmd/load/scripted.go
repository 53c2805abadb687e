package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ScriptedConfig is the scripted-client scenario's settings (-scripted*).
type ScriptedConfig struct {
	// People arrive evenly over For in each phase, each from an address of
	// their own, participate once and poll like the page (every second,
	// or after Retry-After), at most pollsPerPerson times.
	People int
	For    time.Duration
	// HammerRate is one user's polls a second on its own request;
	// CrowdRate the participations a second of many user ids from one
	// client address, in an event whose own budget is CrowdBudget.
	HammerRate, CrowdRate int
	CrowdBudget           string
}

// pollsPerPerson bounds a person's polls in a phase.
const pollsPerPerson = 5

// Scripted is the scenario's report: everyone else's latency without
// scripted clients (Baseline) and with them (Attacked), and what the
// limits let the scripted clients through.
type Scripted struct {
	People   int         `json:"people"`
	ForS     float64     `json:"forS"`
	Baseline PeopleStats `json:"baseline"`
	Attacked PeopleStats `json:"attacked"`
	// Hammer is one user polling its request HammerRate times a second;
	// Crowd is many user ids participating from one address.
	Hammer Limited `json:"hammer"`
	Crowd  Limited `json:"crowd"`
	// P95Ratio is Attacked's over Baseline's, participations and polls.
	ParticipateP95Ratio float64  `json:"participateP95Ratio"`
	PollP95Ratio        float64  `json:"pollP95Ratio"`
	Failed              []string `json:"failed,omitempty"`
}

// PeopleStats are the people's answers in one phase.
type PeopleStats struct {
	Participations   int     `json:"participations"`
	Polls            int     `json:"polls"`
	ParticipateP95Ms float64 `json:"participateP95Ms"`
	PollP95Ms        float64 `json:"pollP95Ms"`
	// Limited counts the people's 429s (the limits must never touch
	// them); Errors any other answer than 202, 200 or 304.
	Limited int `json:"limited"`
	Errors  int `json:"errors"`
}

// Limited is what a limit let a scripted client do.
type Limited struct {
	Budget  string `json:"budget"`
	Sent    int    `json:"sent"`
	Allowed int    `json:"allowed"`
	Refused int    `json:"refused"` // 429 with a Retry-After of a second or more
	Errors  int    `json:"errors"`  // anything else (a 429 without Retry-After included)
	// AllowedMax is the most the budget lets through in the phase: its
	// burst and its rate over the phase, on this one API process.
	AllowedMax int `json:"allowedMax"`
}

// scripted runs the scenario: a baseline phase of people alone, then
// the same people (new ids) with the scripted clients beside them.
func scripted(ctx context.Context, c *client, cfg ScriptedConfig, st *stack, runID string) (*Scripted, error) {
	pollBudget, replicas := st.Advertised["asyncevent.ratePollUser"], st.Advertised["asyncevent.rateReplicas"]
	if pollBudget == "" || replicas == "" {
		return nil, fmt.Errorf("the stack at -dev does not advertise its rate limits (asyncevent.ratePollUser, asyncevent.rateReplicas): restart make run from this checkout")
	}
	n, err := strconv.Atoi(replicas)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("asyncevent.rateReplicas %q", replicas)
	}
	s := &Scripted{People: cfg.People, ForS: cfg.For.Seconds(),
		Hammer: Limited{Budget: pollBudget + " per user", AllowedMax: allowedMax(pollBudget, n, cfg.For)},
		Crowd:  Limited{Budget: cfg.CrowdBudget + " per address (the event's own)", AllowedMax: allowedMax(cfg.CrowdBudget, n, cfg.For)}}
	// A short phase first, discarded: the first calls of a fresh stack
	// (connections, the JVM of DynamoDB Local warming up, a new event's
	// cache) are slower than any that follow, and the baseline must not
	// pay for them.
	warm := cfg
	warm.People, warm.For = max(1, cfg.People/5), max(time.Second, cfg.For/5)
	fmt.Printf("[scripted] warm-up: %d people over %v (discarded)...\n", warm.People, warm.For)
	if _, err := s.phase(ctx, c, warm, fmt.Sprintf("load-%s-scripted-warm", runID), false); err != nil {
		return nil, err
	}
	for _, attacked := range []bool{false, true} {
		name := map[bool]string{false: "baseline", true: "attacked"}[attacked]
		fmt.Printf("[scripted] %s: %d people over %v%s...\n", name, cfg.People, cfg.For,
			map[bool]string{false: "", true: fmt.Sprintf(", one user polling %d/s, %d participations/s from one address", cfg.HammerRate, cfg.CrowdRate)}[attacked])
		ps, err := s.phase(ctx, c, cfg, fmt.Sprintf("load-%s-scripted-%s", runID, name), attacked)
		if err != nil {
			return nil, err
		}
		if attacked {
			s.Attacked = ps
		} else {
			s.Baseline = ps
		}
	}
	s.ParticipateP95Ratio = s.Attacked.ParticipateP95Ms / max(s.Baseline.ParticipateP95Ms, 0.001)
	s.PollP95Ratio = s.Attacked.PollP95Ms / max(s.Baseline.PollP95Ms, 0.001)
	return s, nil
}

// allowedMax is the most a budget ("N/s", "N/m", "N/h") lets one of
// replicas processes allow in d: its share of the burst and of the rate.
func allowedMax(budget string, replicas int, d time.Duration) int {
	ns, unit, _ := strings.Cut(budget, "/")
	count, _ := strconv.Atoi(ns)
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	if count < 1 || per == 0 {
		return -1 // off, or unreadable: not checked
	}
	burst := (count + replicas - 1) / replicas
	return burst + int(float64(count)/float64(replicas)*d.Seconds()/per.Seconds()) + 1
}

// phase runs one phase in its own event.
func (s *Scripted) phase(ctx context.Context, c *client, cfg ScriptedConfig, event string, attacked bool) (PeopleStats, error) {
	body := map[string]any{"eventId": event, "eventType": "FIRST_COME", "capacityTotal": 100000,
		"limits": map[string]any{"participationsPerAddress": cfg.CrowdBudget}}
	if _, err := c.admin(ctx, http.MethodPost, "/admin/events", body, nil); err != nil {
		return PeopleStats{}, fmt.Errorf("create the scripted scenario's event: %w", err)
	}
	defer func() {
		_, _ = c.admin(context.WithoutCancel(ctx), http.MethodPost, "/admin/events/"+event+"/close", nil, nil)
	}()
	var (
		mu                 sync.Mutex
		ps                 PeopleStats
		partMs, pollMs     []float64
		wg                 sync.WaitGroup
		scriptedWG         sync.WaitGroup
		hammerCtx, stopAll = context.WithTimeout(ctx, cfg.For)
	)
	defer stopAll()
	if attacked {
		scriptedWG.Add(2)
		go func() { defer scriptedWG.Done(); s.hammer(hammerCtx, c, cfg, event) }()
		go func() { defer scriptedWG.Done(); s.crowd(hammerCtx, c, cfg, event) }()
	}
	every := cfg.For / time.Duration(cfg.People)
	for i := range cfg.People {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user, addr := fmt.Sprintf("%s-p%d", event, i), fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
			t0 := time.Now()
			code, _, b, err := c.as(ctx, user, addr, http.MethodPost, "/events/"+event+"/participations")
			mu.Lock()
			partMs = append(partMs, ms(time.Since(t0)))
			ps.Participations++
			ps.count(code, err)
			mu.Unlock()
			var acc struct {
				RequestID string `json:"requestId"`
			}
			if code != http.StatusAccepted || json.Unmarshal(b, &acc) != nil {
				return
			}
			for range pollsPerPerson {
				t0 := time.Now()
				code, h, b, err := c.as(ctx, user, addr, http.MethodGet, "/requests/"+acc.RequestID)
				mu.Lock()
				pollMs = append(pollMs, ms(time.Since(t0)))
				ps.Polls++
				ps.count(code, err)
				mu.Unlock()
				var v polled
				if code != http.StatusOK || json.Unmarshal(b, &v) != nil || terminal(v) {
					return
				}
				wait := time.Second
				if ra, err := strconv.Atoi(h.Get("Retry-After")); err == nil && ra > 1 {
					wait = time.Duration(ra) * time.Second
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
		}()
		select {
		case <-ctx.Done():
			return ps, ctx.Err()
		case <-time.After(every):
		}
	}
	wg.Wait()
	scriptedWG.Wait()
	sort.Float64s(partMs)
	sort.Float64s(pollMs)
	ps.ParticipateP95Ms, ps.PollP95Ms = pct(partMs, .95), pct(pollMs, .95)
	return ps, nil
}

// terminal says whether a poll shows the request decided.
func terminal(v polled) bool {
	return v.Status == "SUCCEEDED" || v.Status == "REJECTED" || v.Status == "FAILED_FINAL"
}

// count notes a person's answer.
func (ps *PeopleStats) count(code int, err error) {
	switch {
	case err != nil:
		ps.Errors++
	case code == http.StatusTooManyRequests:
		ps.Limited++
	case code != http.StatusAccepted && code != http.StatusOK && code != http.StatusNotModified:
		ps.Errors++
	}
}

// hammer is one user polling its own request HammerRate times a second
// until ctx ends (at most 64 polls in flight).
func (s *Scripted) hammer(ctx context.Context, c *client, cfg ScriptedConfig, event string) {
	user, addr := event+"-hammer", "10.8.0.1"
	code, _, b, err := c.as(ctx, user, addr, http.MethodPost, "/events/"+event+"/participations")
	var acc struct {
		RequestID string `json:"requestId"`
	}
	if err != nil || code != http.StatusAccepted || json.Unmarshal(b, &acc) != nil {
		s.Hammer.Errors++
		return
	}
	s.paced(ctx, &s.Hammer, cfg.HammerRate, func(int) (int, http.Header, error) {
		code, h, _, err := c.as(ctx, user, addr, http.MethodGet, "/requests/"+acc.RequestID)
		return code, h, err
	})
}

// crowd is many user ids participating from one address CrowdRate times
// a second until ctx ends.
func (s *Scripted) crowd(ctx context.Context, c *client, cfg ScriptedConfig, event string) {
	s.paced(ctx, &s.Crowd, cfg.CrowdRate, func(i int) (int, http.Header, error) {
		code, h, _, err := c.as(ctx, fmt.Sprintf("%s-crowd%d", event, i), "10.9.9.9", http.MethodPost, "/events/"+event+"/participations")
		return code, h, err
	})
}

// paced calls call rate times a second until ctx ends, at most 64 at
// once, and counts the answers into l.
func (s *Scripted) paced(ctx context.Context, l *Limited, rate int, call func(i int) (int, http.Header, error)) {
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, 64)
	)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
		}
		select {
		case sem <- struct{}{}:
		default:
			continue // the API is slower than the rate: skip this tick
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			code, h, err := call(i)
			if ctx.Err() != nil && err != nil {
				return // cut off by the phase's end
			}
			mu.Lock()
			defer mu.Unlock()
			l.Sent++
			ra, _ := strconv.Atoi(h.Get("Retry-After"))
			switch {
			case err != nil:
				l.Errors++
			case code == http.StatusAccepted || code == http.StatusOK || code == http.StatusNotModified:
				l.Allowed++
			case code == http.StatusTooManyRequests && ra >= 1:
				l.Refused++
			default:
				l.Errors++
			}
		}()
	}
}

// Check sets s.Failed: a person limited, a scripted client let through
// more than its budget, errors, or the people's p95 more than
// maxRatio times the baseline's (and 20 ms more: loopback latencies of a
// few milliseconds move by that much between any two runs).
func (s *Scripted) Check(maxRatio float64) {
	for _, ps := range []PeopleStats{s.Baseline, s.Attacked} {
		if ps.Limited > 0 {
			s.Failed = append(s.Failed, fmt.Sprintf("%d of the people's calls were answered 429", ps.Limited))
		}
		if ps.Errors > 0 {
			s.Failed = append(s.Failed, fmt.Sprintf("%d of the people's calls failed", ps.Errors))
		}
	}
	for _, l := range s.clients() {
		if l.l.AllowedMax >= 0 && l.l.Allowed > l.l.AllowedMax {
			s.Failed = append(s.Failed, fmt.Sprintf("%s got %d calls through, past its budget's %d", l.name, l.l.Allowed, l.l.AllowedMax))
		}
		if l.l.Errors > 0 {
			s.Failed = append(s.Failed, fmt.Sprintf("%s had %d answers that were neither allowed nor 429 with Retry-After", l.name, l.l.Errors))
		}
	}
	if maxRatio > 0 {
		for _, p := range []struct {
			what      string
			base, att float64
		}{{"participation", s.Baseline.ParticipateP95Ms, s.Attacked.ParticipateP95Ms}, {"poll", s.Baseline.PollP95Ms, s.Attacked.PollP95Ms}} {
			if p.att > p.base*maxRatio && p.att-p.base > 20 {
				s.Failed = append(s.Failed, fmt.Sprintf("the people's %s p95 rose from %.1f to %.1f ms beside the scripted clients (more than %.2f×)", p.what, p.base, p.att, maxRatio))
			}
		}
	}
}

// namedLimited is a scripted client's name and what the limits let it do.
type namedLimited struct {
	name string
	l    Limited
}

// clients are the scripted clients, named.
func (s *Scripted) clients() []namedLimited {
	return []namedLimited{{"one user hammering polls", s.Hammer}, {"many users from one address", s.Crowd}}
}

// Summary is the scenario's lines of the summary.
func (s *Scripted) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "== scripted clients (%d people each phase over %.0f s, each from its own address)\n", s.People, s.ForS)
	for _, p := range []struct {
		name string
		ps   PeopleStats
	}{{"alone", s.Baseline}, {"beside the scripted clients", s.Attacked}} {
		fmt.Fprintf(&b, "  people %s: %d participations p95 %.1f ms, %d polls p95 %.1f ms; %d limited, %d errors\n",
			p.name, p.ps.Participations, p.ps.ParticipateP95Ms, p.ps.Polls, p.ps.PollP95Ms, p.ps.Limited, p.ps.Errors)
	}
	fmt.Fprintf(&b, "  the people's p95 beside them / alone: participation %.2f×, poll %.2f×\n", s.ParticipateP95Ratio, s.PollP95Ratio)
	for _, l := range s.clients() {
		fmt.Fprintf(&b, "  %s (%s): %d sent, %d allowed (the budget allows at most %d), %d refused 429, %d other\n",
			l.name, l.l.Budget, l.l.Sent, l.l.Allowed, l.l.AllowedMax, l.l.Refused, l.l.Errors)
	}
	return b.String()
}
