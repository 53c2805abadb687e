package asynceventapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
)

// The token verifier and the domain state the user-id rule each in its own
// package (the SDK imports no module, the domain root no SDK): a subject the
// verifier accepts is a user id the domain accepts, and the reverse.
func TestSubjectRuleIsUserIDRule(t *testing.T) {
	if auth.MaxSubject != asyncevent.MaxUserID {
		t.Fatalf("auth.MaxSubject %d, asyncevent.MaxUserID %d", auth.MaxSubject, asyncevent.MaxUserID)
	}
	ids := []string{"u1", "auth0|5f7c8ec7", "user@example.com", "a#b%c", "a b", "ü", "Zoë", strings.Repeat("a", 255),
		strings.Repeat("é", 127), strings.Repeat("é", 128), "", strings.Repeat("a", 256), "a\nb", "a\tb", "a\x00b", "a\x7fb",
		"a\u0085b", "a\u200bb", "\xff", "a\xc3", "a\ufffeb", "a\uffffb", "a\ufffdb", "a\U0010ffffb", "\U0001F600"}
	for r := rune(0); r < 0x110000; r += 7 {
		ids = append(ids, "x"+string(r))
	}
	for _, id := range ids {
		if a, d := auth.ValidSubject(id), asyncevent.ValidUserID(id); a != d {
			t.Errorf("%q: auth.ValidSubject %v, asyncevent.ValidUserID %v", id, a, d)
		}
	}
}

// Token subjects in identity providers' formats are user ids end to end:
// participate, read the request, list /me/participations; "a#b" and "a"
// (and "a%23b", what "a#b" escapes to) cannot see each other's requests.
func TestIdentityProviderSubjects(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
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
