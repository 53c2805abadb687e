package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
)

// serviceAPI serves a service API over v with checks, timed and counted
// by the metrics kit as the services serve theirs, with one route that
// fails with a domain problem.
func serviceAPI(t *testing.T, v *auth.Verifier, checks ...server.Checker) (base string, fams func() metricstest.Families) {
	t.Helper()
	errGone := errors.New("thing: gone")
	problems := server.Errors{Types: []server.ProblemType{{Err: errGone, Status: http.StatusGone, Name: "gone"}}, Prefix: "thing: "}
	mux := http.NewServeMux()
	server.NewServiceAPI(mux, "T", "1", "d", "http://x", v, false, server.Bounds{}, func(api huma.API) {
		huma.Register(api, server.Op("gone", http.MethodGet, "/gone", "Gone", "T", server.NoToken(), server.Fails(http.StatusGone)),
			func(context.Context, *struct{}) (*struct{}, error) { return nil, problems.Problem(errGone) })
		huma.Register(api, server.Op("mine", http.MethodGet, "/mine", "Mine", "T"),
			func(context.Context, *struct{}) (*struct{}, error) { return nil, nil })
	}, checks...)
	reg := metrics.NewRegistry()
	h := metrics.NewHTTP(reg, "svc", problems.Problems()...)
	srv := httptest.NewServer(h.Wrap(mux))
	t.Cleanup(srv.Close)
	mux.Handle("GET /metrics", metrics.Handler(reg))
	return srv.URL, func() metricstest.Families { return metricstest.Scrape(t, srv.URL+"/metrics") }
}

// get answers GET url's status and, into v (if set), its JSON body.
func get(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return resp.StatusCode
}

// /readyz reports the key set and the service's checks: 503 and fail
// while the identity provider's key set was never loaded (every token
// refused) or a check fails, warn (200) when one warns, pass otherwise;
// /healthz answers 200 throughout, whatever the dependencies do.
func TestReadyReport(t *testing.T) {
	t.Parallel()
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer idp.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	down, err := auth.NewVerifier(ctx, auth.Config{JWKSURL: idp.URL, Issuer: "https://idp.example", Audience: "pacer"})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := auth.NewVerifier(ctx, auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	warn := func() server.ReadyCheck {
		return server.ReadyCheck{Name: "other", Status: server.Warn, Output: "so-so"}
	}

	for _, c := range []struct {
		name   string
		v      *auth.Verifier
		checks []server.Checker
		status int
		report string
		key    string
	}{
		{"no key set", down, nil, http.StatusServiceUnavailable, server.Fail, server.Fail},
		{"a secret, a check that warns", hs, []server.Checker{warn}, http.StatusOK, server.Warn, server.Pass},
		{"a secret", hs, nil, http.StatusOK, server.Pass, server.Pass},
	} {
		base, _ := serviceAPI(t, c.v, c.checks...)
		var rep server.ReadyReport
		if got := get(t, base+"/readyz", &rep); got != c.status || rep.Status != c.report {
			t.Errorf("%s: %d %s, want %d %s (%+v)", c.name, got, rep.Status, c.status, c.report, rep)
		}
		if len(rep.Checks) != 1+len(c.checks) || rep.Checks[0].Name != "jwt-key-set" || rep.Checks[0].Status != c.key {
			t.Errorf("%s: checks %+v, want the key set's (%s) first", c.name, rep.Checks, c.key)
		}
		if c.v == down && (rep.Checks[0].LastFailureAt == 0 || rep.Checks[0].LastSuccessAt != 0 || rep.Checks[0].Output == "") {
			t.Errorf("%s: the key set's check %+v, want its failure's time and what it means", c.name, rep.Checks[0])
		}
		if got := get(t, base+"/healthz", nil); got != http.StatusOK {
			t.Errorf("%s: /healthz %d, want 200", c.name, got)
		}
	}
}

// The key set's check fails without a key (never loaded, or an empty
// set), warns while the last fetch failed but keys are held (they still
// verify), and passes otherwise, and always for a secret.
func TestKeySetStatusCheck(t *testing.T) {
	t.Parallel()
	// sdk/auth's TestKeySetStatus drives a verifier through these states;
	// this is the check of each.
	for _, c := range []struct {
		s    auth.KeySetStatus
		want string
	}{
		{auth.KeySetStatus{Remote: true, FailedAt: time.Now()}, server.Fail},
		{auth.KeySetStatus{Remote: true, LoadedAt: time.Now()}, server.Fail}, // an empty set
		{auth.KeySetStatus{Remote: true, Keys: 2, LoadedAt: time.Now().Add(-time.Minute), FailedAt: time.Now()}, server.Warn},
		{auth.KeySetStatus{Remote: true, Keys: 2, LoadedAt: time.Now(), FailedAt: time.Now().Add(-time.Minute)}, server.Pass},
		{auth.KeySetStatus{Keys: 1}, server.Pass},
	} {
		if got := server.KeySetStatusCheck(c.s); got.Status != c.want {
			t.Errorf("%+v: %s, want %s (%+v)", c.s, got.Status, c.want, got)
		}
	}
}

// Every error answer is counted by class, status and problem type: Huma's
// and the kit's own (a missing token, a path no route matches) as
// about:blank, a domain problem by its type's name; the series of the
// problems a service may answer start at 0.
func TestProblemsAreCountedByType(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := auth.NewVerifier(ctx, auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	base, fams := serviceAPI(t, v)
	for path, status := range map[string]int{"/gone": http.StatusGone, "/mine": http.StatusUnauthorized, "/nowhere": http.StatusNotFound, "/healthz": http.StatusOK} {
		if got := get(t, base+path, nil); got != status {
			t.Fatalf("GET %s: %d, want %d", path, got, status)
		}
	}
	f := fams()
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"class", "client", "status", "410", "type", "gone"}, 1},
		{[]string{"class", "unauthenticated", "status", "401", "type", "about:blank"}, 1},
		{[]string{"class", "client", "status", "404", "type", "about:blank"}, 1},
		{[]string{"class", "server", "status", "503", "type", "unavailable"}, 0},
		{[]string{"class", "rate_limited", "status", "429", "type", "rate-limited"}, 0},
		{[]string{"class", "cancelled", "status", "499", "type", "about:blank"}, 0},
	} {
		if got := f.Value("pacer_http_problems_total", append([]string{"service", "svc"}, c.labels...)...); got != c.want {
			t.Errorf("problems%v = %v, want %v", c.labels, got, c.want)
		}
	}
	if got := f.Value("pacer_http_problems_total"); got != 3 {
		t.Errorf("%v problems counted, want 3 (a 200 is none)", got)
	}
}

// A problem type's label is its name under ProblemBase; about:blank for
// one that means no more than its status; "other" for a foreign URI.
func TestProblemTypeLabel(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{
		server.ProblemBase + "event-closed": "event-closed", "about:blank": "about:blank", "": "about:blank",
		"https://example.com/problems/x": "other", server.ProblemBase: "other",
	} {
		if got := server.ProblemTypeLabel(typ); got != want {
			t.Errorf("%q: %q, want %q", typ, got, want)
		}
	}
}
