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
//	resumed := stalltest.Storm{Users: 150}.Run(t, pause, func(i int) {
//		a := c.Do(t, req) // each user's calls
//	})
//	c.Check(t, stalltest.Deadline, stalltest.Margin)
package stalltest

import (
	"cmp"
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

// The storms' defaults: the deadline the API under test is given, the
// margin its answers may take beyond it, how long the users take to
// arrive, and when (after the first arrives) and how long the stall is.
const (
	Deadline = time.Second
	Margin   = 500 * time.Millisecond
	Spread   = 1200 * time.Millisecond
	PauseAt  = 400 * time.Millisecond
	Pause    = 2500 * time.Millisecond
)

// Storm is a storm of calls with a stall in its middle; zero fields are
// the defaults above.
type Storm struct {
	Users                  int // each runs its calls in its own goroutine
	Spread, PauseAt, Pause time.Duration
}

// Run starts s.Users users, user(i) each, evenly over s.Spread, stalls
// a dependency s.PauseAt after the first started (pause, which returns
// its resume) for s.Pause, resumes it, and returns once every user is
// done, with the time of the resume.
func (s Storm) Run(t testing.TB, pause func() (resume func() error, err error), user func(i int)) (resumed time.Time) {
	t.Helper()
	s.Spread, s.PauseAt, s.Pause = cmp.Or(s.Spread, Spread), cmp.Or(s.PauseAt, PauseAt), cmp.Or(s.Pause, Pause)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range s.Users {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * s.Spread / time.Duration(s.Users))
			user(i)
		})
	}
	time.Sleep(s.PauseAt)
	resume, err := pause()
	if err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	time.Sleep(s.Pause)
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	resumed = time.Now()
	wg.Wait()
	t.Logf("stalltest: %d users; the stall began %s after the first, lasted %s, and the last user was done %s after it", s.Users,
		paused.Sub(start).Round(time.Millisecond), resumed.Sub(paused).Round(time.Millisecond), time.Since(resumed).Round(time.Millisecond))
	return resumed
}

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
