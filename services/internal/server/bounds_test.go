package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
)

// boundAPI serves a service API bounded by b, timed and counted as the
// services serve theirs, with routes whose dependency hangs until the
// call's context ends (GET /hang, POST /hang: a read and a write; POST
// /bulk) or until release is closed (GET /wait, counting the calls
// inside in waiting).
func boundAPI(t *testing.T, b server.Bounds) (base string, release chan struct{}, waiting *atomic.Int64, fams func() metricstest.Families) {
	t.Helper()
	errGone := errors.New("thing: gone")
	problems := server.Errors{Types: []server.ProblemType{{Err: errGone, Status: http.StatusGone, Name: "gone"}}, Prefix: "thing: "}
	release, waiting = make(chan struct{}), &atomic.Int64{}
	hang := server.Handle(server.Anyone, problems.Problem, func(ctx context.Context, _ struct{}, _ *struct{}) (*struct{}, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("thing: a dependency: %w", ctx.Err()) // what a client library returns
	})
	mux := http.NewServeMux()
	server.NewServiceAPI(mux, "T", "1", "d", "http://x", nil, false, b, func(api huma.API) {
		huma.Register(api, server.Op("read", http.MethodGet, "/hang", "Read", "T", server.NoToken()), hang)
		huma.Register(api, server.Op("write", http.MethodPost, "/hang", "Write", "T", server.NoToken()), hang)
		huma.Register(api, server.Op("bulk", http.MethodPost, "/bulk", "Bulk", "T", server.NoToken(), server.Bulk()), hang)
		huma.Register(api, server.Op("gone", http.MethodPost, "/gone", "Gone", "T", server.NoToken()),
			server.Handle(server.Anyone, problems.Problem, func(ctx context.Context, _ struct{}, _ *struct{}) (*struct{}, error) {
				<-ctx.Done()
				return nil, errGone // a domain error, once the deadline has passed
			}))
		huma.Register(api, server.Op("wait", http.MethodGet, "/wait", "Wait", "T", server.NoToken()),
			server.Handle(server.Anyone, problems.Problem, func(ctx context.Context, _ struct{}, _ *struct{}) (*struct{}, error) {
				waiting.Add(1)
				defer waiting.Add(-1)
				select {
				case <-release:
					return nil, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}))
	})
	reg := metrics.NewRegistry()
	h := metrics.NewHTTP(reg, "svc", problems.Problems()...)
	srv := httptest.NewServer(h.Wrap(mux))
	t.Cleanup(srv.Close)
	mux.Handle("GET /metrics", metrics.Handler(reg))
	return srv.URL, release, waiting, func() metricstest.Families { return metricstest.Scrape(t, srv.URL+"/metrics") }
}

// answer is one call's answer: status, problem type, Retry-After, and
// how long it took.
type answer struct {
	status     int
	typ        string
	retryAfter string
	took       time.Duration
}

func call(t *testing.T, method, url string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return answer{}
	}
	defer resp.Body.Close()
	var p huma.ErrorModel
	_ = json.NewDecoder(resp.Body).Decode(&p) // a 200 has no problem
	return answer{status: resp.StatusCode, typ: p.Type, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start)}
}

// An operation whose dependency hangs answers 503 timeout with
// Retry-After at its class's deadline (a read's, a write's, a bulk
// one's), whatever its work then returns (the dependency's context
// error, a domain error); the answers are counted by type.
func TestBoundAnswersAtTheDeadline(t *testing.T) {
	t.Parallel()
	b := server.Bounds{Read: 200 * time.Millisecond, Write: 400 * time.Millisecond, Bulk: 600 * time.Millisecond}
	base, _, _, fams := boundAPI(t, b)
	const margin = 300 * time.Millisecond
	for _, c := range []struct {
		method, path string
		deadline     time.Duration
	}{
		{http.MethodGet, "/hang", b.Read}, {http.MethodPost, "/hang", b.Write}, {http.MethodPost, "/bulk", b.Bulk}, {http.MethodPost, "/gone", b.Write},
	} {
		a := call(t, c.method, base+c.path)
		if a.status != http.StatusServiceUnavailable || a.typ != server.ProblemBase+server.TimeoutProblem || a.retryAfter != "2" {
			t.Errorf("%s %s: %+v, want 503 timeout with Retry-After 2", c.method, c.path, a)
		}
		if a.took < c.deadline || a.took > c.deadline+margin {
			t.Errorf("%s %s answered after %s, want its deadline %s (+ up to %s)", c.method, c.path, a.took, c.deadline, margin)
		}
	}
	if got := fams().Value("pacer_http_problems_total", "service", "svc", "class", "server", "status", "503", "type", server.TimeoutProblem); got != 4 {
		t.Errorf("%v timeouts counted, want 4", got)
	}
}

// Past MaxInFlight operations running at once, a call is answered 503
// overloaded with Retry-After at once, having done nothing; the probes
// are not bounded; once the running calls end, calls are taken again.
// Proven by concurrency: 3 calls held inside, 40 more at once. The calls
// shed are logged, but not one line each.
func TestBoundShedsPastMaxInFlight(t *testing.T) {
	t.Parallel()
	var logged bytes.Buffer
	base, release, waiting, fams := boundAPI(t, server.Bounds{MaxInFlight: 3, Read: time.Minute, Log: slog.New(slog.NewTextHandler(&logged, nil))})
	held := make(chan answer, 3)
	for range 3 {
		go func() { held <- call(t, http.MethodGet, base+"/wait") }()
	}
	for deadline := time.Now().Add(10 * time.Second); waiting.Load() < 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls inside after 10 s, want 3", waiting.Load())
		}
	}
	var wg sync.WaitGroup
	shed := make(chan answer, 40)
	for range 40 {
		wg.Go(func() { shed <- call(t, http.MethodGet, base+"/wait") })
	}
	wg.Wait()
	close(shed)
	for a := range shed {
		if a.status != http.StatusServiceUnavailable || a.typ != server.ProblemBase+server.OverloadedProblem || a.retryAfter != "1" || a.took > 2*time.Second {
			t.Fatalf("a call past the bound: %+v, want 503 overloaded with Retry-After 1, at once", a)
		}
	}
	if lines := strings.Count(logged.String(), "shedding load"); lines != 1 {
		t.Errorf("%d lines about the calls shed, want 1 (at most one every %s): %s", lines, server.ShedLogEvery, logged.String())
	}
	if n := waiting.Load(); n != 3 {
		t.Fatalf("%d calls inside, want the 3 the bound admits", n)
	}
	if a := call(t, http.MethodGet, base+"/healthz"); a.status != http.StatusOK {
		t.Fatalf("/healthz at the bound: %+v, want 200", a)
	}
	close(release)
	for range 3 {
		if a := <-held; a.status != http.StatusNoContent && a.status != http.StatusOK {
			t.Fatalf("a held call: %+v, want it answered once released", a)
		}
	}
	if a := call(t, http.MethodGet, base+"/wait"); a.status != http.StatusNoContent && a.status != http.StatusOK {
		t.Fatalf("after the bound's calls ended: %+v, want the call taken", a)
	}
	if got := fams().Value("pacer_http_problems_total", "service", "svc", "class", "server", "status", "503", "type", server.OverloadedProblem); got != 40 {
		t.Errorf("%v calls shed counted, want 40", got)
	}
}

// An operation's class sets its deadline: Bulk, then TagAdmin, then GET,
// then any other method; unset bounds are the defaults.
func TestOperationClass(t *testing.T) {
	t.Parallel()
	b := server.Bounds{Read: 1, Write: 2, Admin: 3, Bulk: 4}
	for _, c := range []struct {
		op   huma.Operation
		want time.Duration
	}{
		{server.Op("a", http.MethodGet, "/a", "A", "T"), 1},
		{server.Op("a", http.MethodDelete, "/a", "A", "T"), 2},
		{server.Op("a", http.MethodGet, "/a", "A", server.TagAdmin), 3},
		{server.Op("a", http.MethodGet, "/a", "A", server.TagAdmin, server.Bulk()), 4},
		{server.Op("a", http.MethodPost, "/a", "A", "T", server.Bulk()), 4},
	} {
		if got := b.Deadline(&c.op); got != c.want {
			t.Errorf("%s %v %v: deadline %d, want %d", c.op.Method, c.op.Tags, c.op.Metadata, got, c.want)
		}
	}
	op := server.Op("a", http.MethodPost, "/a", "A", "T")
	if got := (server.Bounds{}).Deadline(&op); got != server.DefaultWriteDeadline {
		t.Errorf("the zero Bounds' write deadline: %s, want %s", got, server.DefaultWriteDeadline)
	}
}
