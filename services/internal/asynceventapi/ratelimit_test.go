package asynceventapi_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/spectest"
)

// A user past the participation budget gets 429 problem+json with
// Retry-After, and nothing is written; past the poll budget likewise.
// Another user is not touched, and an admin is not limited.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	limits, err := server.LimitSettings{ParticipateUser: "2/m", PollUser: "3/m", LimitSharing: server.LimitSharing{Replicas: 1}}.Limits(nil)
	if err != nil {
		t.Fatal(err)
	}
	api := limitedAPI(t, env, limits)
	adm := token(t, "root", auth.RoleAdmin)
	for _, id := range []string{"rl-a", "rl-b", "rl-c"} {
		if _, err := env.Admin.CreateEvent(context.Background(), asyncevent_firstCome(id)); err != nil {
			t.Fatal(err)
		}
	}
	u1 := token(t, "u1")
	resp := api.Post("/events/rl-a/participations", u1)
	expect(t, resp, http.StatusAccepted)
	id := decode[asynceventapi.Accepted](t, resp).RequestID
	expect(t, api.Post("/events/rl-b/participations", u1), http.StatusAccepted)
	resp = api.Post("/events/rl-c/participations", u1)
	expect(t, resp, http.StatusTooManyRequests)
	if ra, err := strconv.Atoi(resp.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 30 {
		t.Errorf("Retry-After %q, want 1..30 s (2 a minute: one back in 30 s)", resp.Header().Get("Retry-After"))
	}
	if ct := resp.Header().Get("Content-Type"); ct != "application/problem+json" || !strings.Contains(resp.Body.String(), server.ProblemBase+server.RateLimitedProblem) {
		t.Errorf("429 as %q: %s, want a rate-limited problem", ct, resp.Body)
	}
	if st, err := env.Admin.EventStats(context.Background(), "rl-c"); err != nil || st.Total != 0 {
		t.Errorf("the refused participation wrote: %+v, %v", st, err)
	}
	expect(t, api.Post("/events/rl-c/participations", token(t, "u2")), http.StatusAccepted)

	for range 3 {
		expect(t, api.Get("/requests/"+id, u1), http.StatusOK)
	}
	expect(t, api.Get("/requests/"+id, u1), http.StatusTooManyRequests)
	for range 5 {
		expect(t, api.Get("/requests/"+id, adm), http.StatusOK)
	}
	// The spec says what a 429 carries.
	paths := api.OpenAPI().Paths
	for name, op := range map[string]*huma.Operation{"participate": paths["/events/{eventId}/participations"].Post, "get-request": paths["/requests/{requestId}"].Get} {
		if r := op.Responses["429"]; r == nil || r.Headers["Retry-After"] == nil {
			t.Errorf("%s: the spec's 429 does not document Retry-After", name)
		}
	}
}

// An event's own budget (limits.participationsPerAddress) limits the
// participations in that event from one client address, on top of the
// deployment's: past it, 429 rate-limited problem+json with Retry-After,
// nothing written, counted by pacer_rate_limited_total{by=event_address}.
// Another address, and another event from the same address, are not
// touched; a budget that does not parse is 422 naming the field, and
// creates nothing.
func TestEventRateLimits(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	limited := asynceventapi.NewRateLimited(reg)
	// humatest's requests come from 127.0.0.1: trusted, their
	// X-Forwarded-For names the client.
	limits, err := server.LimitSettings{LimitSharing: server.LimitSharing{Replicas: 1, TrustedProxies: "127.0.0.1/32"}}.Limits(limited.Refused)
	if err != nil {
		t.Fatal(err)
	}
	env := asynceventtest.New(t, asynceventtest.Options{Ingest: asyncevent.IngestConfig{Limiter: asynceventapi.NewEventLimiter(limits.Limiter)}})
	api := limitedAPI(t, env, limits)
	adm := token(t, "root", auth.RoleAdmin)

	for _, bad := range []string{"0/m", "2/d", "two/m", "1000000/m", "02/m", " 2/m", "2/m/s"} {
		resp := api.Post("/admin/events", adm, map[string]any{"eventId": "el-bad", "eventType": "FIRST_COME", "capacityTotal": 5,
			"limits": map[string]any{"participationsPerAddress": bad}})
		expect(t, resp, http.StatusUnprocessableEntity)
		if !strings.Contains(resp.Body.String(), "body.limits.participationsPerAddress") {
			t.Errorf("budget %q: the 422 does not name body.limits.participationsPerAddress: %s", bad, resp.Body)
		}
	}
	expect(t, api.Get("/admin/events/el-bad", adm), http.StatusNotFound)

	resp := api.Post("/admin/events", adm, map[string]any{"eventId": "el", "eventType": "FIRST_COME", "capacityTotal": 50,
		"limits": map[string]any{"participationsPerAddress": "2/m"}})
	expect(t, resp, http.StatusCreated)
	if ev := decode[asynceventapi.EventView](t, resp); ev.Limits == nil || ev.Limits.ParticipationsPerAddress != "2/m" {
		t.Fatalf("the event's view shows limits %+v, want participationsPerAddress 2/m", ev.Limits)
	}
	expect(t, api.Post("/admin/events", adm, map[string]any{"eventId": "el-open", "eventType": "FIRST_COME", "capacityTotal": 50}), http.StatusCreated)

	from := func(addr string) string { return "X-Forwarded-For: " + addr }
	for _, u := range []string{"u1", "u2"} {
		expect(t, api.Post("/events/el/participations", token(t, u), from("203.0.113.5")), http.StatusAccepted)
	}
	resp = api.Post("/events/el/participations", token(t, "u3"), from("203.0.113.5"))
	expect(t, resp, http.StatusTooManyRequests)
	if ra, err := strconv.Atoi(resp.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 30 {
		t.Errorf("Retry-After %q, want 1..30 s (2 a minute: one back in 30 s)", resp.Header().Get("Retry-After"))
	}
	if ct := resp.Header().Get("Content-Type"); ct != "application/problem+json" || !strings.Contains(resp.Body.String(), server.ProblemBase+"rate-limited") {
		t.Errorf("the 429 is %q: %s; want a rate-limited problem", ct, resp.Body)
	}
	expect(t, api.Post("/events/el/participations", token(t, "u3"), from("203.0.113.6")), http.StatusAccepted)
	expect(t, api.Post("/events/el-open/participations", token(t, "u4"), from("203.0.113.5")), http.StatusAccepted)
	if st, err := env.Admin.EventStats(context.Background(), "el"); err != nil || st.Total != 3 {
		t.Errorf("event el holds %+v (%v), want 3 requests: the refused one wrote", st, err)
	}
	if n := metricstest.Gather(t, reg).Value("pacer_rate_limited_total", "class", "participate", "by", "event_address"); n != 1 {
		t.Errorf("pacer_rate_limited_total{participate, event_address} = %v, want 1", n)
	}
}

// limitedAPI is env's API with limits, its answers checked against its
// spec.
func limitedAPI(t *testing.T, env *asynceventtest.Env, limits server.Limits) humatest.TestAPI {
	t.Helper()
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	d := deps(env)
	d.Limits = limits
	return spectest.Wrap(t, asynceventapi.NewAPI(http.NewServeMux(), d, v, false))
}
