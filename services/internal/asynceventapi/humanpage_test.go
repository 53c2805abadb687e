package asynceventapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/browsertest"
)

// fakeWidget is a challenge provider's widget script, as Turnstile's API
// looks to the page: render puts a button in the element that, clicked,
// hands the page the token "good".
const fakeWidget = `window.turnstile = {
  render(el, o) {
    const b = document.createElement("button");
    b.id = "fake-challenge"; b.type = "button"; b.textContent = "I am human";
    b.addEventListener("click", () => o.callback("good"));
    el.append(b);
    return "w1";
  },
  reset() { window.__resets = (window.__resets || 0) + 1; },
};`

// The participation page of an event requiring a human check loads the
// provider's widget (from its own origin, on loopback, which the CSP
// allows), refuses to participate before the widget gave a token, then
// sends it as humanToken: the request is accepted and decided.
func TestHumanCheckPage(t *testing.T) {
	sv := newSiteverify(t)
	humans, err := asynceventapi.NewHumanVerifier(sv.URL, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	widget := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(fakeWidget))
	}))
	t.Cleanup(widget.Close)
	env := asynceventtest.New(t, asynceventtest.Options{Ingest: asyncevent.IngestConfig{Humans: humans}})
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	asynceventapi.NewAPI(mux, deps(env), v, true)
	if err := asynceventapi.RegisterPages(mux, true, nil, &server.Widget{Script: widget.URL + "/api.js?render=explicit", SiteKey: "site-1"}); err != nil {
		t.Fatal(err)
	}
	var downPosts atomic.Int32 // participations sent to the event whose provider is down
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/events/human-down/participations" {
			downPosts.Add(1)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	env.StartWorkers(t, 1, consumer.Config{})
	if _, err := env.Admin.CreateEvent(context.Background(), asyncevent.NewEvent{EventID: "human", EventType: asyncevent.FirstCome, Capacity: 5,
		ClosesAt: time.Now().Add(time.Hour).UnixMilli(), HumanCheck: asyncevent.HumanCheck{Required: true}}); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/?event=human")
	b.WaitFor(10*time.Second, "the challenge widget", `!!document.querySelector("#human #fake-challenge") && !document.querySelector("#human").hidden`)
	b.Click("#participate")
	b.WaitText(5*time.Second, "#message", "Complete the human check")
	if st, err := env.Admin.EventStats(context.Background(), "human"); err != nil || st.Total != 0 {
		t.Fatalf("a participation without a token was sent: %+v %v", st, err)
	}
	b.Click("#fake-challenge")
	b.WaitFor(5*time.Second, "the widget's token", `document.querySelector("#human").dataset.state === "ready"`)
	b.Click("#participate")
	b.WaitFor(10*time.Second, "the requestId", `document.querySelector("#request-id").textContent.length > 0`)
	b.WaitFor(30*time.Second, "SUCCESS", `document.querySelector("#result").dataset.code === "SUCCESS"`)
	if resets := browsertest.Eval[int](b, `window.__resets || 0`); resets < 1 {
		t.Errorf("the spent token's widget was not reset")
	}

	// With the provider down and the event refusing then, the page says so
	// after one participation: a 503 human-check-unavailable is not
	// retried (a retry would send the same token again, and the user would
	// wait for the retries to run out only to read "cannot be reached").
	if _, err := env.Admin.CreateEvent(context.Background(), asyncevent.NewEvent{EventID: "human-down", EventType: asyncevent.FirstCome, Capacity: 5,
		ClosesAt: time.Now().Add(time.Hour).UnixMilli(), HumanCheck: asyncevent.HumanCheck{Required: true}}); err != nil {
		t.Fatal(err)
	}
	sv.setDown(true)
	b.Navigate(srv.URL + "/ui/?event=human-down")
	b.WaitFor(10*time.Second, "the challenge widget", `!!document.querySelector("#human #fake-challenge") && !document.querySelector("#human").hidden`)
	b.Click("#fake-challenge")
	b.WaitFor(5*time.Second, "the widget's token", `document.querySelector("#human").dataset.state === "ready"`)
	b.Click("#participate")
	b.WaitText(5*time.Second, "#message", "cannot be made just now")
	if n := downPosts.Load(); n != 1 {
		t.Errorf("the page sent %d participations for one click with the provider down, want 1 (no retry of human-check-unavailable)", n)
	}
	b.NoErrors()
}
