package asynceventapi_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
)

// participation creates an arrival event (one seat, open an hour) as an
// admin and returns the id of user's participation in it.
func participation(t *testing.T, e *apiEnv, event, user string) string {
	t.Helper()
	expect(t, e.api.Post("/admin/events", token(t, "root", auth.RoleAdmin), map[string]any{"eventId": event, "eventType": "FIRST_COME", "capacityTotal": 1,
		"closesAt": time.Now().Add(time.Hour).UnixMilli()}), http.StatusCreated)
	resp := e.api.Post("/events/"+event+"/participations", token(t, user))
	expect(t, resp, http.StatusAccepted)
	return decode[asynceventapi.Accepted](t, resp).RequestID
}

// GET /requests/{id} tells the client when a new read can show a change:
// an arrival candidate waits for the allocator's watermark (MaxLateness,
// 3.5 s, after its queuedAt), so its answer carries Retry-After in whole
// seconds; a request still QUEUED (its worker has not taken it) carries
// none, and the client polls on its own schedule.
func TestRetryAfterOnAnArrivalCandidate(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	adm := token(t, "root", auth.RoleAdmin)
	id := participation(t, e, "hint", "u1")

	resp := e.api.Get("/requests/"+id, token(t, "u1"))
	expect(t, resp, http.StatusOK)
	if v := decode[asynceventapi.RequestView](t, resp); v.Status != "QUEUED" || resp.Header().Get("Retry-After") != "" {
		t.Fatalf("queued request: status %s, Retry-After %q; want QUEUED and none", v.Status, resp.Header().Get("Retry-After"))
	}

	// A worker's first delivery makes it a candidate.
	now := time.Now().UnixMilli()
	if err := e.Store.Transition(context.Background(), &asyncevent.Transition{RequestID: id, EventID: "hint", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusQueued}, To: asyncevent.StatusProcessing, At: now, StartedAt: now,
		KeepQueuedAt: true, UIPhase: asyncevent.PhaseAllocating, Message: "waiting for allocation"}); err != nil {
		t.Fatal(err)
	}
	// The header's whole seconds, rounded up, of what is left of the 3.5 s
	// when the server read the clock: between the two readings here.
	hint := func(queuedAt int64, at time.Time) int64 {
		left := queuedAt + 3500 - at.UnixMilli()
		if left <= 0 {
			return 0
		}
		return (left + 999) / 1000
	}
	for _, path := range []string{"/requests/" + id, "/admin/requests/" + id} {
		who := token(t, "u1")
		if path[1] == 'a' {
			who = adm
		}
		before := time.Now()
		resp = e.api.Get(path, who)
		after := time.Now()
		expect(t, resp, http.StatusOK)
		v := decode[asynceventapi.RequestView](t, resp)
		if v.Status != "PROCESSING" || v.UIPhase != "ALLOCATING" {
			t.Fatalf("%s: status %s/%s, want PROCESSING/ALLOCATING", path, v.Status, v.UIPhase)
		}
		lo, hi := hint(v.QueuedAt, after), hint(v.QueuedAt, before)
		if hi == 0 {
			t.Fatalf("%s: read %v after its queuedAt, past the 3.5 s the hint covers: the machine is too slow for this test", path, before.Sub(time.UnixMilli(v.QueuedAt)))
		}
		got, err := strconv.ParseInt(resp.Header().Get("Retry-After"), 10, 64)
		if resp.Header().Get("Retry-After") == "" {
			got, err = 0, nil
		}
		if err != nil || got < lo || got > hi {
			t.Fatalf("%s: Retry-After %q, want %d..%d (seconds left of MaxLateness after queuedAt %d)", path, resp.Header().Get("Retry-After"), lo, hi, v.QueuedAt)
		}
	}
}

// A poll's answer carries an ETag; sent back as If-None-Match it gets
// 304 with no body while the request reads the same, and 200 with a new
// tag once it changed. A tag works only for the caller it was issued to:
// another user still gets 404, and an admin gets the request.
func TestPollETag(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	adm := token(t, "root", auth.RoleAdmin)
	id := participation(t, e, "etag", "u1")
	path := "/requests/" + id

	resp := e.api.Get(path, token(t, "u1"))
	expect(t, resp, http.StatusOK)
	queued := resp.Header().Get("ETag")
	if queued == "" || resp.Header().Get("Cache-Control") != "private, no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", queued, resp.Header().Get("Cache-Control"))
	}
	resp = e.api.Get(path, token(t, "u1"), "If-None-Match: "+queued)
	expect(t, resp, http.StatusNotModified)
	if resp.Body.Len() != 0 || resp.Header().Get("ETag") != queued {
		t.Fatalf("304: body %q, ETag %q, want none and %s", resp.Body, resp.Header().Get("ETag"), queued)
	}
	expect(t, e.api.Get(path, token(t, "u2"), "If-None-Match: "+queued), http.StatusNotFound)
	expect(t, e.api.Get(path, adm, "If-None-Match: "+queued), http.StatusOK)
	expect(t, e.api.Get(path, token(t, "u1"), `If-None-Match: "garbage"`), http.StatusOK)

	// A worker's first delivery makes it a candidate: the old tag no
	// longer matches; the new one answers 304 (before its pollAt, without
	// a read: TestBarePollsAsPacerDoes counts the reads).
	now := time.Now().UnixMilli()
	if err := e.Store.Transition(context.Background(), &asyncevent.Transition{RequestID: id, EventID: "etag", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusQueued}, To: asyncevent.StatusProcessing, At: now, StartedAt: now,
		KeepQueuedAt: true, UIPhase: asyncevent.PhaseAllocating, Message: "waiting for allocation"}); err != nil {
		t.Fatal(err)
	}
	resp = e.api.Get(path, token(t, "u1"), "If-None-Match: "+queued)
	expect(t, resp, http.StatusOK)
	candidate := resp.Header().Get("ETag")
	if v := decode[asynceventapi.RequestView](t, resp); v.UIPhase != "ALLOCATING" || candidate == queued {
		t.Fatalf("after the change: uiPhase %s, ETag %s (was %s)", v.UIPhase, candidate, queued)
	}
	resp = e.api.Get(path, token(t, "u1"), "If-None-Match: "+candidate)
	expect(t, resp, http.StatusNotModified)
	if resp.Header().Get("ETag") != candidate || resp.Header().Get("Retry-After") == "" {
		t.Fatalf("candidate's 304: ETag %q, Retry-After %q", resp.Header().Get("ETag"), resp.Header().Get("Retry-After"))
	}
}
