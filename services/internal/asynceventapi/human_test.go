package asynceventapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/humancheck"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/spectest"
)

// siteverify is a challenge provider's siteverify on loopback: it passes
// the token "good" sent with the secret "s3cret", and records the client
// addresses it was told. While down is set it answers 502, as a provider
// that cannot be reached does.
type siteverify struct {
	*httptest.Server
	mu      sync.Mutex
	remotes []string
	down    bool
}

// setDown makes the provider unreachable (true) or reachable again.
func (sv *siteverify) setDown(down bool) {
	sv.mu.Lock()
	sv.down = down
	sv.mu.Unlock()
}

func newSiteverify(t *testing.T) *siteverify {
	t.Helper()
	sv := &siteverify{}
	sv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sv.mu.Lock()
		sv.remotes = append(sv.remotes, r.PostForm.Get("remoteip"))
		down := sv.down
		sv.mu.Unlock()
		if down {
			http.Error(w, "provider down", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("secret") == "s3cret" && r.PostForm.Get("response") == "good" {
			_, _ = w.Write([]byte(`{"success":true,"error-codes":[]}`))
			return
		}
		_, _ = w.Write([]byte(`{"success":false,"error-codes":["invalid-input-response"]}`))
	}))
	t.Cleanup(sv.Close)
	return sv
}

// An event requiring a human check, over the API with a siteverify on
// loopback: a passed token is 202; a missing or failed one is 422 naming
// body.humanToken; with the provider down, refuse is 503 and admit is 202
// saying admitted-unverified. Refusals write nothing, and
// pacer_human_checks_total counts each outcome.
func TestHumanCheckOverTheAPI(t *testing.T) {
	t.Parallel()
	sv := newSiteverify(t)
	provider, err := humancheck.New(humancheck.Config{URL: sv.URL, Secret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	env := asynceventtest.New(t, asynceventtest.Options{Ingest: asyncevent.IngestConfig{Humans: asynceventapi.HumanVerifier(provider), HumanChecks: asynceventapi.NewHumanChecks(reg)}})
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	d := deps(env)
	d.Ready = []server.Checker{asynceventapi.HumanCheckReady(provider)}
	api := spectest.Wrap(t, asynceventapi.NewAPI(http.NewServeMux(), d, v, false))
	admin := token(t, "root", auth.RoleAdmin)
	// The readiness report's human check, as the participations found the
	// provider: status, the report's status and code.
	ready := func(when string, status int, check string) {
		t.Helper()
		resp := api.Get("/readyz")
		expect(t, resp, status)
		rep := decode[server.ReadyReport](t, resp)
		if len(rep.Checks) != 2 || rep.Checks[1].Name != "human-check" || rep.Checks[1].Status != check {
			t.Errorf("%s: /readyz %s, want the human check %s", when, resp.Body.String(), check)
		}
	}
	ready("before any check", http.StatusOK, server.Pass)

	// The setting: created, shown, and a bad value named.
	for _, c := range []struct {
		id    string
		check map[string]any
	}{{"hc-refuse", map[string]any{"required": true}}, {"hc-admit", map[string]any{"required": true, "onUnavailable": "admit"}}} {
		resp := api.Post("/admin/events", admin, map[string]any{"eventId": c.id, "eventType": "FIRST_COME", "capacityTotal": 10, "humanCheck": c.check})
		expect(t, resp, http.StatusCreated)
		want := map[string]string{"hc-refuse": "refuse", "hc-admit": "admit"}[c.id]
		if ev := decode[asynceventapi.EventView](t, resp); ev.HumanCheck == nil || !ev.HumanCheck.Required || ev.HumanCheck.OnUnavailable != want {
			t.Fatalf("%s: view %s, want humanCheck required, onUnavailable %s", c.id, resp.Body.String(), want)
		}
	}
	for _, c := range []struct {
		check map[string]any
		at    string
	}{
		{map[string]any{"required": true, "onUnavailable": "maybe"}, "body.humanCheck.onUnavailable"},
		{map[string]any{"onUnavailable": "admit"}, "body.humanCheck.onUnavailable"},
	} {
		resp := api.Post("/admin/events", admin, map[string]any{"eventId": "hc-bad", "eventType": "FIRST_COME", "capacityTotal": 1, "humanCheck": c.check})
		expect(t, resp, http.StatusUnprocessableEntity)
		if p := decode[huma.ErrorModel](t, resp); len(p.Errors) == 0 || p.Errors[0].Location != c.at {
			t.Errorf("%v: problem %s, want an error at %s", c.check, resp.Body.String(), c.at)
		}
	}
	resp := api.Get("/events/hc-refuse", token(t, "u0"))
	expect(t, resp, http.StatusOK)
	if ev := decode[asynceventapi.EventView](t, resp); ev.HumanCheck == nil || !ev.HumanCheck.Required {
		t.Fatalf("the participant's view %s lacks humanCheck", resp.Body.String())
	}

	// Refusals, each naming what is wrong, writing nothing.
	for _, c := range []struct {
		body   any
		status int
		code   string
	}{
		{nil, http.StatusUnprocessableEntity, "human-token-missing"},
		{map[string]any{}, http.StatusUnprocessableEntity, "human-token-missing"},
		{map[string]any{"humanToken": "forged"}, http.StatusUnprocessableEntity, "human-check-failed"},
	} {
		args := []any{token(t, "u1")}
		if c.body != nil {
			args = append(args, c.body)
		}
		resp := api.Post("/events/hc-refuse/participations", args...)
		expect(t, resp, c.status)
		p := decode[huma.ErrorModel](t, resp)
		if !strings.HasSuffix(p.Type, "/"+c.code) {
			t.Errorf("%v: problem type %q, want %s", c.body, p.Type, c.code)
		}
		if len(p.Errors) != 1 || p.Errors[0].Location != "body.humanToken" {
			t.Errorf("%v: problem %s, want one error at body.humanToken", c.body, resp.Body.String())
		}
	}
	if st, err := env.Admin.EventStats(context.Background(), "hc-refuse"); err != nil || st.Total != 0 {
		t.Fatalf("refused participations wrote: %+v %v", st, err)
	}
	if told := sv.told(); len(told) != 1 || told[0] != "127.0.0.1" { // humatest's client address
		t.Errorf("siteverify told remoteip %q, want the caller's address once", told)
	}

	// Passed.
	resp = api.Post("/events/hc-refuse/participations", token(t, "u1"), map[string]any{"humanToken": "good"})
	expect(t, resp, http.StatusAccepted)
	if a := decode[asynceventapi.Accepted](t, resp); a.RequestID == "" || a.HumanCheck != "" {
		t.Fatalf("passed: %s", resp.Body.String())
	}

	ready("after a passed check", http.StatusOK, server.Pass)

	// The provider down: refuse is 503 and writes nothing; admit is 202,
	// admitted unverified; the readiness report fails (503) while /healthz
	// still passes.
	sv.Close()
	resp = api.Post("/events/hc-refuse/participations", token(t, "u2"), map[string]any{"humanToken": "good"})
	expect(t, resp, http.StatusServiceUnavailable)
	if p := decode[huma.ErrorModel](t, resp); !strings.HasSuffix(p.Type, "/human-check-unavailable") {
		t.Errorf("provider down: %s", resp.Body.String())
	}
	if st, err := env.Admin.EventStats(context.Background(), "hc-refuse"); err != nil || st.Total != 1 {
		t.Fatalf("the refused participation wrote: %+v %v", st, err)
	}
	resp = api.Post("/events/hc-admit/participations", token(t, "u2"), map[string]any{"humanToken": "good"})
	expect(t, resp, http.StatusAccepted)
	if a := decode[asynceventapi.Accepted](t, resp); a.RequestID == "" || a.HumanCheck != asyncevent.HumanAdmittedUnverified {
		t.Fatalf("admitted: %s, want humanCheck %s", resp.Body.String(), asyncevent.HumanAdmittedUnverified)
	}

	ready("with the provider down", http.StatusServiceUnavailable, server.Fail)
	expect(t, api.Get("/healthz"), http.StatusOK)
	if c := asynceventapi.HumanCheckReady(nil)(); c.Status != server.Pass || !strings.Contains(c.Output, asynceventapi.HumanCheckSecretEnv) {
		t.Errorf("no provider configured: %+v, want pass naming the secret's variable", c)
	}

	fams := metricstest.Gather(t, reg)
	for outcome, want := range map[string]float64{"missing": 2, "failed": 1, "passed": 1, "unavailable_refused": 1, "unavailable_admitted": 1} {
		if got := fams.Value("pacer_human_checks_total", "outcome", outcome); got != want {
			t.Errorf("pacer_human_checks_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
}

// told is what the siteverify was told of the clients' addresses.
func (sv *siteverify) told() []string {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return append([]string(nil), sv.remotes...)
}
