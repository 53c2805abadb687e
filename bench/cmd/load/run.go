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
	code, _, b, err := c.do(ctx, method, path, body, nil)
	switch {
	case err != nil:
		return code, err
	case code >= 300:
		return code, fmt.Errorf("%s %s: %d %s", method, path, code, bytes.TrimSpace(b))
	case out != nil:
		return code, json.Unmarshal(b, out)
	}
	return code, nil
}

// do sends a request as the dev admin, with body as JSON (if not nil)
// and the headers hdr, and returns the answer.
func (c *client) do(ctx context.Context, method, path string, body any, hdr http.Header) (int, http.Header, []byte, error) {
	return c.send(ctx, method, path, body, hdr, "load-admin", "admin")
}

// as sends a request without a body as the dev user user from the
// client address addr (X-Forwarded-For, which make run believes from
// loopback).
func (c *client) as(ctx context.Context, user, addr, method, path string) (int, http.Header, []byte, error) {
	return c.send(ctx, method, path, nil, http.Header{"X-Forwarded-For": {addr}}, user, "")
}

// send sends a request as the dev user user with roles (dev headers).
func (c *client) send(ctx context.Context, method, path string, body any, hdr http.Header, user, roles string) (int, http.Header, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body) // plain data
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("X-Pacer-Dev-User", user)
	if roles != "" {
		req.Header.Set("X-Pacer-Dev-Roles", roles)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// polled is what a poll shows of a request.
type polled struct {
	Status     string `json:"status"`
	UIPhase    string `json:"uiPhase"`
	ResultCode string `json:"resultCode"`
	QueuedAt   int64  `json:"queuedAt"`
	FinishedAt int64  `json:"finishedAt"`
}

// poll reads a request as its owner's page does (GET /requests/{id}, here
// as the dev admin, who may read any request), with If-None-Match etag
// when not "". A 304 answers the zero polled, which is not terminal.
func (c *client) poll(ctx context.Context, id, etag string) (polled, int, http.Header, error) {
	var v polled
	var hdr http.Header
	if etag != "" {
		hdr = http.Header{"If-None-Match": {etag}}
	}
	code, h, b, err := c.do(ctx, http.MethodGet, "/requests/"+id, nil, hdr)
	switch {
	case err != nil:
	case code == http.StatusOK:
		err = json.Unmarshal(b, &v)
	case code != http.StatusNotModified:
		err = fmt.Errorf("GET /requests/%s: %d %s", id, code, bytes.TrimSpace(b))
	}
	return v, code, h, err
}

// run runs one plan against its own event.
// workers, if set, reads the workers' decided requests, sampled with the
// queue for the drain rate; raw, if set, are the stand-ins' raw rates
// measured just before, for the ratios.
func run(ctx context.Context, c *client, p Plan, runID string, drain time.Duration, workers *workerSampler, raw *RawRates) (*Report, error) {
	event := fmt.Sprintf("load-%s-%s", runID, p.Key())
	capacity := max(1, p.Requests/2)
	if _, err := c.admin(ctx, http.MethodPost, "/admin/events", map[string]any{"eventId": event, "eventType": "FIRST_COME", "capacityTotal": capacity}, nil); err != nil {
		return nil, fmt.Errorf("create the event (is the stack running in dev mode?): %w", err)
	}
	r := &Report{Name: p.Name, Round: p.Round, Event: event, Capacity: capacity, Users: p.Users, Rate: p.Rate, Requests: p.Requests, Errors: map[string]int{}, Results: map[string]int{}, Raw: raw}
	// The API's own account of its ingests, before the attack and after
	// the drain.
	apiBefore, apiErr := scrapeAPI(ctx, c.http, c.base)
	if workers != nil {
		workers.resetCPU()
	}
	start := time.Now()
	r.Started = start

	attacker, targeter, pacer, duration := newAttack(c, p, event, runID)
	pctx, cancelPolls := context.WithTimeout(ctx, drain+time.Duration(p.Requests)*time.Millisecond)
	defer cancelPolls()
	ar := &attackRun{c: c, p: p, r: r, start: start, pctx: pctx, inflight: make(chan struct{}, max(1, p.PollInflight)), attackOver: make(chan struct{})}
	sampleDone := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() { ar.sampleQueue(ctx, workers, sampleDone) })

	progress := time.NewTicker(time.Second)
	defer progress.Stop()
	m, sent, ok := ar.attack(ctx, attacker, attacker.Attack(targeter, pacer, duration, p.Key()), progress)
	attackEnd := time.Now()
	close(ar.attackOver)
	ar.drain(progress, ok)
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
	r.Polls.finish()
	if err := r.readEvent(ctx, c, ok); err != nil {
		return nil, err
	}
	r.readAPI(ctx, c, apiBefore, apiErr)
	r.drainRate()
	r.deadLetters()
	if workers != nil {
		r.PeakWorkers = workers.peakWorkers()
		r.WorkerCPU = r.workerCPU(workers.cpuSince())
		if r.WorkerCPU != nil {
			r.WorkerCPU.PeakRSSMiB = workers.peakRSS() / (1 << 20)
		}
	}
	return r, nil
}

// newAttack builds the plan's attacker: a closed model at p.Users
// workers with no pacing, or an open one at p.Rate arrivals per second
// for p.For. Its targeter posts one participation per new user id, at
// most p.Requests.
func newAttack(c *client, p Plan, event, runID string) (*vegeta.Attacker, vegeta.Targeter, vegeta.Pacer, time.Duration) {
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
	if p.Users > 0 {
		attacker := vegeta.NewAttacker(vegeta.Workers(uint64(p.Users)), vegeta.MaxWorkers(uint64(p.Users)), vegeta.Connections(p.Users), vegeta.Timeout(30*time.Second))
		return attacker, targeter, vegeta.Rate{Freq: 0}, 0
	}
	attacker := vegeta.NewAttacker(vegeta.Workers(64), vegeta.Connections(1000), vegeta.Timeout(30*time.Second))
	return attacker, targeter, vegeta.Rate{Freq: p.Rate, Per: time.Second}, p.For
}

// readEvent reads the run's event stats for the exact-N check (ok
// requests were accepted), then closes the event.
func (r *Report) readEvent(ctx context.Context, c *client, ok int) error {
	var st struct {
		ByStatus          map[string]int `json:"byStatus"`
		CapacityRemaining int            `json:"capacityRemaining"`
		InvariantOK       bool           `json:"invariantOk"`
	}
	if _, err := c.admin(ctx, http.MethodGet, "/admin/events/"+r.Event+"/stats", nil, &st); err != nil {
		return err
	}
	r.Succeeded, r.CapacityRemaining, r.InvariantOK = st.ByStatus["SUCCEEDED"], st.CapacityRemaining, st.InvariantOK
	// Close the run's event: an open event stays in every capacity
	// invariant check of the API (up to 100 open events read per check).
	if _, err := c.admin(ctx, http.MethodPost, "/admin/events/"+r.Event+"/close", nil, nil); err != nil {
		r.Notes = append(r.Notes, "the run's event is left open: "+err.Error())
	}
	want := min(r.Capacity, ok)
	r.ExactN = st.InvariantOK && r.Succeeded == want && r.CapacityRemaining == r.Capacity-want
	return nil
}

// readAPI reads the API's /metrics a second time and splits the ingest
// time between the two readings (before: apiBefore, or apiErr if that
// reading failed); it notes a reading that failed.
func (r *Report) readAPI(ctx context.Context, c *client, apiBefore apiIngest, apiErr error) {
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
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func pct(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	// Nearest rank: the ceil(q·n)-th value.
	return sorted[max(0, min(len(sorted)-1, int(math.Ceil(q*float64(len(sorted))))-1))]
}
