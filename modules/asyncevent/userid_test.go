package asyncevent_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/ddb"
)

func TestValidUserID(t *testing.T) {
	for id, want := range map[string]bool{
		"u1": true, "auth0|5f7c8ec7c33c6c004bbafe82": true, "google-oauth2|123": true, "user@example.com": true,
		"a#b%c": true, "a b": true, "ü": true, strings.Repeat("a", 255): true, strings.Repeat("é", 127): true,
		"": false, strings.Repeat("a", 256): false, "a\nb": false, "a\x00b": false, "a\x7fb": false, "a\u0085b": false,
		"\xff": false, "a\uffffb": false,
	} {
		if got := asyncevent.ValidUserID(id); got != want {
			t.Errorf("ValidUserID(%q) = %v, want %v", id, got, want)
		}
	}
}

// User ids are token subjects in the formats identity providers use; they
// work end to end (participate, be decided by a worker, read back, list),
// every key holding one escapes it, and users whose ids only differ in
// escaping cannot see each other's requests nor use each other's cursors.
func TestIdentityProviderUserIDs(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 100)
	firstCome(t, env, "ev2", 100)
	users := []string{"auth0|abc", "google-oauth2|123", "user@example.com", "a#b%c", "a#b", "a", "a%23b", strings.Repeat("x", 255)}
	ids := map[string]string{}
	var all []string
	for _, u := range users {
		p := participate(t, env.Ingest, "ev", u)
		ids[u] = p.RequestID
		all = append(all, p.RequestID)
		if d := participate(t, env.Ingest, "ev", u); !d.IsDuplicate || d.RequestID != p.RequestID {
			t.Fatalf("%q: second participation %+v, want a duplicate of %s", u, d, p.RequestID)
		}
	}
	all = append(all, participate(t, env.Ingest, "ev2", "a#b").RequestID)
	env.StartWorkers(t, 1, consumer.Config{})
	for _, r := range waitTerminal(t, env, all, 20*time.Second) {
		if r.Status != asyncevent.StatusSucceeded {
			t.Fatalf("request %s of %q is %s (%s)", r.RequestID, r.UserID, r.Status, r.ErrorCode)
		}
	}
	for _, u := range users {
		r, err := env.Query.GetRequest(ctx, asyncevent.Caller{UserID: u}, ids[u])
		if err != nil || r.UserID != u {
			t.Fatalf("%q reads own request: %+v, %v", u, r, err)
		}
		item := rawItem(t, env, "REQ#"+ids[u], "META")
		if got, want := str(item, "GSI1PK"), "USER#"+ddb.Escape(u); got != want {
			t.Errorf("%q: GSI1PK %q, want %q", u, got, want)
		}
		if got, want := r.IdempotencyKey, "IDEMP#ev#"+ddb.Escape(u); got != want {
			t.Errorf("%q: idempotency key %q, want %q", u, got, want)
		}
		rawItem(t, env, "IDEMP#ev#"+ddb.Escape(u), "LOCK")
		wantN := 1
		if u == "a#b" {
			wantN = 2
		}
		page, err := env.Query.MyRequests(ctx, u, 20, "")
		if err != nil || len(page.Requests) != wantN {
			t.Fatalf("%q lists %d requests (%v), want %d", u, len(page.Requests), err, wantN)
		}
		for _, r := range page.Requests {
			if r.UserID != u {
				t.Fatalf("%q's list holds %q's request %s", u, r.UserID, r.RequestID)
			}
		}
	}
	for _, pair := range [][2]string{{"a#b", "a"}, {"a", "a#b"}, {"a#b", "a%23b"}, {"a%23b", "a#b"}} {
		if _, err := env.Query.GetRequest(ctx, asyncevent.Caller{UserID: pair[1]}, ids[pair[0]]); !errors.Is(err, asyncevent.ErrRequestNotFound) {
			t.Errorf("%q reads %q's request: %v, want not found", pair[1], pair[0], err)
		}
	}
	page, err := env.Query.MyRequests(ctx, "a#b", 1, "")
	if err != nil || page.Cursor == "" {
		t.Fatalf("a#b's first page: %+v, %v", page, err)
	}
	for _, other := range []string{"a", "a%23b", "a#b%c"} {
		if _, err := env.Query.MyRequests(ctx, other, 1, page.Cursor); !errors.Is(err, asyncevent.ErrCursor) {
			t.Errorf("%q used a#b's cursor: %v, want ErrCursor", other, err)
		}
	}
	if next, err := env.Query.MyRequests(ctx, "a#b", 1, page.Cursor); err != nil || len(next.Requests) != 1 {
		t.Fatalf("a#b's second page: %+v, %v", next, err)
	}
	for _, bad := range []string{"", "a\nb", strings.Repeat("a", 256)} {
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: bad}); !errors.Is(err, asyncevent.ErrInvalidID) {
			t.Errorf("Participate(%q): %v, want ErrInvalidID", bad, err)
		}
		if _, err := env.Query.MyRequests(ctx, bad, 20, ""); !errors.Is(err, asyncevent.ErrInvalidID) {
			t.Errorf("MyRequests(%q): %v, want ErrInvalidID", bad, err)
		}
	}
}
