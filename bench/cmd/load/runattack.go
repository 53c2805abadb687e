package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// attackRun is what one run's attack loop, its status polls and its queue
// sampler share: the report they fill, under mu.
type attackRun struct {
	c     *client
	p     Plan
	r     *Report
	mu    sync.Mutex // guards r while the polls and the sampler run
	start time.Time
	// pctx bounds the polls: the drain timeout, and more for more requests.
	pctx context.Context
	// inflight holds a token for each poll in flight (Plan.PollInflight).
	inflight chan struct{}
	// attackOver is closed when the attack ends (Plan.PollAfter waits on it).
	attackOver chan struct{}
	pollers    sync.WaitGroup
}

// accepted is a request the API accepted, polled to a terminal state from
// start (when its 202 arrived).
type accepted struct {
	id    string
	start time.Time
}

// attack reads the attack's results to the end: the latencies, the
// answers by second and the errors by status into the report, a poll of
// each accepted request, and a progress line each tick. It returns the
// closed metrics, the requests sent and those accepted (202).
func (ar *attackRun) attack(ctx context.Context, attacker *vegeta.Attacker, results <-chan *vegeta.Result, progress *time.Ticker) (m *vegeta.Metrics, sent, ok int) {
	m = &vegeta.Metrics{}
	r := ar.r
	for {
		select {
		case res, more := <-results:
			if !more {
				m.Close()
				return m, sent, ok
			}
			if res.Code == 0 && res.Error == vegeta.ErrNoTargets.Error() {
				continue // the targeter ran out: no request was sent
			}
			m.Add(res)
			sent++
			sec := int(res.Timestamp.Sub(ar.start).Seconds())
			r.addSecond(sec, float64(res.Latency.Microseconds())/1000, res.Code == http.StatusAccepted)
			if res.Code == http.StatusAccepted {
				ok++
				var a struct {
					RequestID string `json:"requestId"`
				}
				if json.Unmarshal(res.Body, &a) == nil && a.RequestID != "" {
					ar.pollers.Go(func() { ar.poll(accepted{a.RequestID, res.Timestamp.Add(res.Latency)}) })
				}
			} else {
				key := fmt.Sprint(res.Code)
				if res.Code == 0 {
					key = "network: " + res.Error
				}
				r.Errors[key]++
			}
		case <-progress.C:
			fmt.Fprintf(os.Stderr, "\r[%s] sent %d/%d, 202 %d, errors %d, queue %d   ", ar.p.Key(), sent, ar.p.Requests, ok, sent-ok, r.lastDepth(&ar.mu))
		case <-ctx.Done():
			attacker.Stop()
		}
	}
}

// poll polls a to a terminal state like the participation page does
// (web/event.js): first after 300 ms, then 1.6× longer each time, at most
// 4 s apart, and not before the answer's Retry-After (nextPoll), so the
// load of the polls is the clients' own. Like a browser's cache, it sends
// the last answer's ETag back (If-None-Match) and takes a 304 as "still
// the same". At most Plan.PollInflight polls are in flight at once.
func (ar *attackRun) poll(a accepted) {
	if ar.p.PollAfter {
		select {
		case <-ar.attackOver:
		case <-ar.pctx.Done():
			return
		}
	}
	etag := ""
	var hinted time.Time // when the last Retry-After ran out
	for delay := 300 * time.Millisecond; ; {
		select {
		case <-ar.pctx.Done():
			return
		case <-time.After(delay):
		}
		ar.inflight <- struct{}{}
		v, code, h, err := ar.c.poll(ar.pctx, a.id, etag)
		<-ar.inflight
		if err != nil {
			delay = nextPoll(delay, "")
			continue
		}
		if e := h.Get("ETag"); e != "" {
			etag = e
		}
		terminal := v.Status == "SUCCEEDED" || v.Status == "REJECTED" || v.Status == "FAILED_FINAL"
		ar.mu.Lock()
		ar.r.Polls.add(code, !terminal && !hinted.IsZero() && time.Now().After(hinted))
		if terminal {
			ar.r.E2E = append(ar.r.E2E, float64(time.Since(a.start).Milliseconds()))
			ar.r.Results[v.ResultCode]++
			ar.r.Polls.decided(v.UIPhase, v.QueuedAt, v.FinishedAt)
		}
		ar.mu.Unlock()
		if terminal {
			return
		}
		ra := h.Get("Retry-After")
		if s, err := strconv.Atoi(ra); err == nil {
			hinted = time.Now().Add(time.Duration(s) * time.Second)
		}
		delay = nextPoll(delay, ra)
	}
}

// drain waits for every poll to end, with a progress line each tick (ok
// requests were accepted).
func (ar *attackRun) drain(progress *time.Ticker, ok int) {
	done := make(chan struct{})
	go func() { ar.pollers.Wait(); close(done) }()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-progress.C:
			ar.mu.Lock()
			fin := len(ar.r.E2E)
			ar.mu.Unlock()
			fmt.Fprintf(os.Stderr, "\r[%s] draining: %d/%d terminal, queue %d   ", ar.p.Key(), fin, ok, ar.r.lastDepth(&ar.mu))
		}
	}
}

// sampleQueue samples the queue's depths (and the workers' decided
// requests, if workers is set) into the report every 500 ms until done
// is closed.
func (ar *attackRun) sampleQueue(ctx context.Context, workers *workerSampler, done <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		var q struct {
			MainDepth int `json:"mainDepth"`
			DeadDepth int `json:"deadDepth"`
		}
		if _, err := ar.c.admin(ctx, http.MethodGet, "/admin/dlq?max=0", nil, &q); err == nil {
			s := QueueSample{AtS: time.Since(ar.start).Seconds(), Main: q.MainDepth, Dead: q.DeadDepth, Decided: -1, Workers: -1}
			if workers != nil {
				if h, n, err := workers.sample(ctx); err == nil {
					s.Decided, s.Workers = h, n
				}
			}
			ar.mu.Lock()
			ar.r.Queue = append(ar.r.Queue, s)
			ar.mu.Unlock()
		}
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}
