package asynceventapi_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/spectest"
)

// A user past the participation budget gets 429 problem+json with
// Retry-After, and nothing is written; past the poll budget likewise.
// Another user is not touched, and an admin is not limited.
func TestRateLimits(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	limits, err := server.LimitSettings{ParticipateUser: "2/m", PollUser: "3/m", Replicas: 1}.Limits(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := deps(env)
	d.Limits = limits
	api := spectest.Wrap(t, asynceventapi.NewAPI(http.NewServeMux(), d, v, false))
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
	if ct := resp.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("429 as %q, want problem+json", ct)
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
}
