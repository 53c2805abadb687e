package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Plan is one run: a closed model (Users concurrent users) or an open one
// (Rate arrivals per second For a while), at most Requests requests.
type Plan struct {
	Name string
	// Round is the plan's round in a -repeat run (0: not repeated).
	Round    int
	Users    int
	Rate     int
	For      time.Duration
	Requests int
	// PollInflight bounds the status polls in flight (-poll-inflight).
	PollInflight int
	// PollAfter holds every poll until the attack is over (-poll-during
	// false), so that ingest is measured without the clients' reads.
	PollAfter bool
}

// Key names the run in event ids, user ids and progress lines: its Name,
// and its round when repeated ("closed-200-r2").
func (p Plan) Key() string {
	if p.Round == 0 {
		return p.Name
	}
	return fmt.Sprintf("%s-r%d", p.Name, p.Round)
}

// client calls the API as the admin (dev headers).
type client struct {
	base string
	http *http.Client
}

func newClient(base string) *client {
	return &client{base: base, http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

func (c *client) admin(ctx context.Context, method, path string, body any, out any) (int, error) {
	code, _, err := c.adminHeader(ctx, method, path, body, out)
	return code, err
}

// adminHeader is admin, with the answer's headers.
func (c *client) adminHeader(ctx context.Context, method, path string, body any, out any) (int, http.Header, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body) // plain data
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Pacer-Dev-User", "load-admin")
	req.Header.Set("X-Pacer-Dev-Roles", "admin")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header, err
	}
	if out != nil && resp.StatusCode < 300 {
		return resp.StatusCode, resp.Header, json.Unmarshal(b, out)
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, resp.Header, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	return resp.StatusCode, resp.Header, nil
}

// run runs one plan against its own event.
// workers, if set, reads the workers' decided requests, sampled with the
// queue for the drain rate; raw, if set, are the stand-ins' raw rates
// measured just before, for the ratios.
func run(ctx context.Context, c *client, p Plan, runID string, drain time.Duration, workers *workerSampler, raw *RawRates) (*Report, error) {
	event := fmt.Sprintf("load-%s-%s", runID, p.Key())
	capacity := max(1, p.Requests/2)
	if _, err := c.admin(ctx, http.MethodPost, "/admin/events", map[string]any{"eventId": event, "eventType": "FIRST_COME", "capacity": capacity}, nil); err != nil {
		return nil, fmt.Errorf("create the event (is the stack running in dev mode?): %w", err)
	}
	r := &Report{Name: p.Name, Round: p.Round, Event: event, Capacity: capacity, Users: p.Users, Rate: p.Rate, Requests: p.Requests, Errors: map[string]int{}, Results: map[string]int{}, Raw: raw}
	// The API's own account of its ingests, before the attack and after
	// the drain.
	apiBefore, apiErr := scrapeAPI(ctx, c.http, c.base)
	start := time.Now()
	r.Started = start

	var n atomic.Int64
	targeter := func(t *vegeta.Target) error {
		i := n.Add(1)
		if int(i) > p.Requests {
			return vegeta.ErrNoTargets
		}
		t.Method, t.URL = http.MethodPost, c.base+"/events/"+event+"/participations"
		t.Header = http.Header{"X-Pacer-Dev-User": {fmt.Sprintf("load-%s-%s-%d", runID, p.Key(), i)}}
		return nil
	}
	var attacker *vegeta.Attacker
	var pacer vegeta.Pacer
	duration := time.Duration(0)
	if p.Users > 0 {
		attacker = vegeta.NewAttacker(vegeta.Workers(uint64(p.Users)), vegeta.MaxWorkers(uint64(p.Users)), vegeta.Connections(p.Users), vegeta.Timeout(30*time.Second))
		pacer = vegeta.Rate{Freq: 0}
	} else {
		attacker = vegeta.NewAttacker(vegeta.Workers(64), vegeta.Connections(1000), vegeta.Timeout(30*time.Second))
		pacer = vegeta.Rate{Freq: p.Rate, Per: time.Second}
		duration = p.For
	}

	// Poll each accepted request to a terminal state; sample the queue.
	type accepted struct {
		id    string
		start time.Time
	}
	// Each accepted request is polled like the participation page does
	// (web/event.js): first after 300 ms, then 1.6× longer each time, at
	// most 4 s apart, and not before the answer's Retry-After (nextPoll),
	// so the load of the polls is the clients' own. At most
	// Plan.PollInflight polls are in flight at once.
	var mu sync.Mutex
	var pollers sync.WaitGroup
	inflight := make(chan struct{}, max(1, p.PollInflight))
	pctx, cancelPolls := context.WithTimeout(ctx, drain+time.Duration(p.Requests)*time.Millisecond)
	defer cancelPolls()
	attackOver := make(chan struct{})
	poll := func(a accepted) {
		if p.PollAfter {
			select {
			case <-attackOver:
			case <-pctx.Done():
				return
			}
		}
		for delay := 300 * time.Millisecond; ; {
			select {
			case <-pctx.Done():
				return
			case <-time.After(delay):
			}
			var v struct {
				Status     string `json:"status"`
				ResultCode string `json:"resultCode"`
			}
			inflight <- struct{}{}
			_, h, err := c.adminHeader(pctx, http.MethodGet, "/admin/requests/"+a.id, nil, &v)
			<-inflight
			delay = nextPoll(delay, h.Get("Retry-After"))
			if err == nil && (v.Status == "SUCCEEDED" || v.Status == "REJECTED" || v.Status == "FAILED_FINAL") {
				mu.Lock()
				r.E2E = append(r.E2E, float64(time.Since(a.start).Milliseconds()))
				r.Results[v.ResultCode]++
				mu.Unlock()
				return
			}
		}
	}
	sampleDone := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			var q struct {
				MainDepth int `json:"mainDepth"`
				DeadDepth int `json:"deadDepth"`
			}
			if _, err := c.admin(ctx, http.MethodGet, "/admin/dlq?max=0", nil, &q); err == nil {
				s := QueueSample{AtS: time.Since(start).Seconds(), Main: q.MainDepth, Dead: q.DeadDepth, Decided: -1, Workers: -1}
				if workers != nil {
					if h, n, err := workers.sample(ctx); err == nil {
						s.Decided, s.Workers = h, n
					}
				}
				mu.Lock()
				r.Queue = append(r.Queue, s)
				mu.Unlock()
			}
			select {
			case <-sampleDone:
				return
			case <-t.C:
			}
		}
	})

	var m vegeta.Metrics
	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	results := attacker.Attack(targeter, pacer, duration, p.Key())
	sent, ok := 0, 0
loop:
	for {
		select {
		case res, more := <-results:
			if !more {
				break loop
			}
			if res.Code == 0 && res.Error == vegeta.ErrNoTargets.Error() {
				continue // the targeter ran out: no request was sent
			}
			m.Add(res)
			sent++
			sec := int(res.Timestamp.Sub(start).Seconds())
			r.addSecond(sec, float64(res.Latency.Microseconds())/1000, res.Code == http.StatusAccepted)
			if res.Code == http.StatusAccepted {
				ok++
				var a struct {
					RequestID string `json:"requestId"`
				}
				if json.Unmarshal(res.Body, &a) == nil && a.RequestID != "" {
					pollers.Go(func() { poll(accepted{a.RequestID, res.Timestamp.Add(res.Latency)}) })
				}
			} else {
				key := fmt.Sprint(res.Code)
				if res.Code == 0 {
					key = "network: " + res.Error
				}
				r.Errors[key]++
			}
		case <-progress.C:
			fmt.Fprintf(os.Stderr, "\r[%s] sent %d/%d, 202 %d, errors %d, queue %d   ", p.Key(), sent, p.Requests, ok, sent-ok, r.lastDepth(&mu))
		case <-ctx.Done():
			attacker.Stop()
		}
	}
	m.Close()
	attackEnd := time.Now()
	close(attackOver)
	done := make(chan struct{})
	go func() { pollers.Wait(); close(done) }()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-progress.C:
			mu.Lock()
			fin := len(r.E2E)
			mu.Unlock()
			fmt.Fprintf(os.Stderr, "\r[%s] draining: %d/%d terminal, queue %d   ", p.Key(), fin, ok, r.lastDepth(&mu))
		}
	}
	close(sampleDone)
	sampler.Wait()
	fmt.Fprintln(os.Stderr)

	r.AttackS, r.DrainS = attackEnd.Sub(start).Seconds(), time.Since(attackEnd).Seconds()
	r.Sent, r.Accepted = sent, ok
	r.ThroughputRPS = m.Throughput
	r.P50Ms, r.P95Ms, r.P99Ms, r.MaxMs = ms(m.Latencies.P50), ms(m.Latencies.P95), ms(m.Latencies.P99), ms(m.Latencies.Max)
	sort.Float64s(r.E2E)
	r.E2EP50Ms, r.E2EP95Ms, r.E2EMaxMs = pct(r.E2E, .5), pct(r.E2E, .95), pct(r.E2E, 1)
	r.Terminal = len(r.E2E)
	var st struct {
		ByStatus          map[string]int `json:"byStatus"`
		CapacityRemaining int            `json:"capacityRemaining"`
		InvariantOK       bool           `json:"invariantOk"`
	}
	if _, err := c.admin(ctx, http.MethodGet, "/admin/events/"+event+"/stats", nil, &st); err != nil {
		return nil, err
	}
	r.Succeeded, r.CapacityRemaining, r.InvariantOK = st.ByStatus["SUCCEEDED"], st.CapacityRemaining, st.InvariantOK
	// Close the run's event: an open event stays in every capacity
	// invariant check of the API (up to 100 open events read per check).
	if _, err := c.admin(ctx, http.MethodPost, "/admin/events/"+event+"/close", nil, nil); err != nil {
		r.Notes = append(r.Notes, "the run's event is left open: "+err.Error())
	}
	want := min(capacity, ok)
	r.ExactN = st.InvariantOK && r.Succeeded == want && r.CapacityRemaining == capacity-want
	// The second reading of the API's /metrics comes after the drain: the
	// ingest counters no longer move (the polls are GetItems), and a scrape
	// runs the API's capacity invariant check (a Scan for the open events
	// and a read of each one's requests, at most every 30 s), which would
	// take DynamoDB Local from the workers during the drain.
	if apiErr == nil {
		var apiAfter apiIngest
		if apiAfter, apiErr = scrapeAPI(ctx, c.http, c.base); apiErr == nil {
			r.API = ingestSplit(apiBefore, apiAfter)
		}
	}
	if apiErr != nil {
		r.Notes = append(r.Notes, "the API's /metrics not read, no split of the ingest time: "+apiErr.Error())
	}
	r.drainRate()
	r.deadLetters()
	if workers != nil {
		r.PeakWorkers = workers.peakWorkers()
	}
	return r, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	// Nearest rank: the ceil(q·n)-th value.
	return sorted[max(0, min(len(sorted)-1, int(math.Ceil(q*float64(len(sorted))))-1))]
}
