package asynceventapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
)

// Token subjects in identity providers' formats are user ids end to end:
// participate, read the request, list /me/participations; "a#b" and "a"
// (and "a%23b", what "a#b" escapes to) cannot see each other's requests.
func TestIdentityProviderSubjects(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	if _, err := e.Service.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	users := []string{"auth0|abc", "google-oauth2|123", "user@example.com", "a#b%c", "a#b", "a", "a%23b"}
	ids := map[string]string{}
	for _, u := range users {
		resp := e.api.Post("/events/ev/participations", token(t, u))
		expect(t, resp, http.StatusAccepted)
		ids[u] = decode[asynceventapi.Accepted](t, resp).RequestID
	}
	e.StartWorkers(t, 1, consumer.Config{})
	for _, u := range users {
		var v asynceventapi.RequestView
		asynceventtest.Eventually(t, 20*time.Second, u+"'s request to finish", func() (bool, error) {
			resp := e.api.Get("/requests/"+ids[u], token(t, u))
			if resp.Code != http.StatusOK {
				return false, fmt.Errorf("status %d: %s", resp.Code, resp.Body.String())
			}
			v = decode[asynceventapi.RequestView](t, resp)
			return v.Status == "SUCCEEDED", nil
		})
		if v.RequestID != ids[u] || v.Status != "SUCCEEDED" {
			t.Fatalf("%q reads own request: %+v", u, v)
		}
		resp := e.api.Get("/me/participations", token(t, u))
		expect(t, resp, http.StatusOK)
		if p := decode[asynceventapi.RequestPage](t, resp); len(p.Items) != 1 || p.Items[0].RequestID != ids[u] {
			t.Fatalf("%q's participations: %+v, want only %s", u, p, ids[u])
		}
	}
	for _, pair := range [][2]string{{"a#b", "a"}, {"a", "a#b"}, {"a#b", "a%23b"}, {"a%23b", "a#b"}, {"a#b%c", "a#b"}} {
		expect(t, e.api.Get("/requests/"+ids[pair[0]], token(t, pair[1])), http.StatusNotFound)
	}
}
