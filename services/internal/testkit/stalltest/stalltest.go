// Package stalltest checks, in tests, that an API answers every call
// within its deadline while a dependency stalls: a Client records every
// answer of a storm of calls (its status, problem type, Retry-After and
// how long it took) and Check holds each to "the expected success, or a
// 503 problem+json with Retry-After, within the deadline plus a margin";
// a Proxy in front of a server (Postgres) stalls every connection through
// it on demand, as a hung server does. Stand-ins the test started itself
// are paused with sdk/standin's Stack.Pause. It is imported by tests
// only.
//
//	c := stalltest.NewClient()
//	a := c.Do(t, req)           // in each of the storm's goroutines
//	c.Check(t, time.Second, 500*time.Millisecond)
package stalltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Answer is one call's answer.
type Answer struct {
	Call       string // method and path
	Status     int
	Type       string // the problem's type, if the answer is a problem
	RetryAfter string
	Took       time.Duration
	Body       []byte
}

// Client makes calls and records every answer. It is safe for concurrent
// use.
type Client struct {
	http    *http.Client
	mu      sync.Mutex
	answers []Answer
}

// NewClient returns a client with room for a storm's connections; a call
// that gets no answer within a minute fails (the deadlines under test
// are seconds).
func NewClient() *Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 1024, 1024
	return &Client{http: &http.Client{Transport: tr, Timeout: time.Minute}}
}

// Do makes req, records its answer and returns it. A call that fails
// without an answer fails t.
func (c *Client) Do(t testing.TB, req *http.Request) Answer {
	start := time.Now()
	a := Answer{Call: req.Method + " " + req.URL.Path}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Errorf("%s: no answer after %s: %v", a.Call, time.Since(start), err)
		return a
	}
	a.Body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	a.Took = time.Since(start)
	if err != nil {
		t.Errorf("%s: reading the answer: %v", a.Call, err)
	}
	a.Status, a.RetryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		var p struct{ Type string }
		if json.Unmarshal(a.Body, &p) == nil {
			a.Type = p.Type
		}
	}
	c.mu.Lock()
	c.answers = append(c.answers, a)
	c.mu.Unlock()
	return a
}

// Answers are the answers recorded so far.
func (c *Client) Answers() []Answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.answers)
}

// Unavailable reports whether a is a 503 problem+json with Retry-After:
// what a bounded API answers past a deadline or its in-flight bound.
func Unavailable(a Answer) bool {
	return a.Status == http.StatusServiceUnavailable && a.Type != "" && a.RetryAfter != ""
}

// Wait sleeps for a's Retry-After, as a client honouring it does.
func Wait(a Answer) {
	if s, err := strconv.Atoi(a.RetryAfter); err == nil && s > 0 {
		time.Sleep(time.Duration(s) * time.Second)
	}
}

// Check fails t unless every answer recorded is a success (2xx or 304)
// or Unavailable, and came within deadline plus margin. It logs how many
// answers of each kind came and how long they took (median, 99th
// percentile, longest), and returns the 503s.
func (c *Client) Check(t testing.TB, deadline, margin time.Duration) (unavailable int) {
	t.Helper()
	as := c.Answers()
	if len(as) == 0 {
		t.Fatal("stalltest: no answer recorded")
	}
	kinds := map[string]int{}
	took := make([]time.Duration, 0, len(as))
	bad := 0
	for _, a := range as {
		took = append(took, a.Took)
		kind := fmt.Sprint(a.Status)
		if a.Type != "" {
			kind += " " + a.Type[strings.LastIndexByte(a.Type, '/')+1:]
		}
		kinds[kind]++
		ok := (a.Status >= 200 && a.Status < 300) || a.Status == http.StatusNotModified || Unavailable(a)
		if Unavailable(a) {
			unavailable++
		}
		if (!ok || a.Took > deadline+margin) && bad < 10 {
			bad++
			t.Errorf("%s: %d %s (Retry-After %q) after %s; want a success or a 503 problem+json with Retry-After, within %s + %s: %.200s",
				a.Call, a.Status, a.Type, a.RetryAfter, a.Took.Round(time.Millisecond), deadline, margin, a.Body)
		}
	}
	slices.Sort(took)
	t.Logf("stalltest: %d answers %v; answer times: median %s, p99 %s, longest %s (deadline %s)", len(as), kinds,
		took[len(took)/2].Round(time.Millisecond), took[len(took)*99/100].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), deadline)
	return unavailable
}
