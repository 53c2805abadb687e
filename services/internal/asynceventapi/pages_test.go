package asynceventapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/browsertest"
)

// pagesStack is the API in dev mode with its pages, on loopback, over a
// test's own table and queue, with a worker.
func pagesStack(t *testing.T, opts asynceventtest.Options) (*asynceventtest.Env, *httptest.Server) {
	t.Helper()
	env := asynceventtest.New(t, opts)
	srv := httptest.NewServer(pagesMux(t, env, true, nil))
	t.Cleanup(srv.Close)
	env.StartWorkers(t, 1, consumer.Config{})
	return env, srv
}

// pagesMux is the API (in dev mode or not) and its pages over env, which
// embed may frame.
func pagesMux(t *testing.T, env *asynceventtest.Env, dev bool, embed server.Origins) *http.ServeMux {
	t.Helper()
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	asynceventapi.NewAPI(mux, deps(env), v, dev)
	if err := asynceventapi.RegisterPages(mux, dev, embed, nil); err != nil {
		t.Fatal(err)
	}
	return mux
}

// signIn picks a dev identity with the page's picker.
func signIn(b *browsertest.Browser, user string) {
	b.SetValue("#dev-user", user)
	b.SetValue("#dev-roles", "")
	b.SetValue("#dev-org", "")
	b.Click("#dev-use")
}

const hostile = `<img src=x onerror="window.__xss=1"><b>Concert</b>`

// A user participates: the requestId at once, the stepper to DONE with
// SUCCESS and the delays; a second click and a reload show the same
// request; the next user finds it sold out; an unknown and a closed event
// say so; a hostile title is shown as text; the page logs no error.
func TestParticipationPage(t *testing.T) {
	env, srv := pagesStack(t, asynceventtest.Options{})
	ctx := context.Background()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "gig", EventType: asyncevent.FirstCome, Title: hostile, Capacity: 1,
		ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	page := srv.URL + "/ui/?event=gig"
	b.Navigate(page)
	b.WaitText(10*time.Second, "#title", "Concert")
	if got := b.Text("#title"); got != hostile {
		t.Errorf("title shows %q, want the text %q", got, hostile)
	}
	if injected := browsertest.Eval[bool](b, `!!document.querySelector("#title img, #title b") || window.__xss === 1`); injected {
		t.Error("the event title was rendered as HTML")
	}

	b.Click("#participate")
	b.WaitFor(5*time.Second, "the requestId", `document.querySelector("#request-id").textContent.length > 0`)
	id := b.Text("#request-id")
	b.WaitFor(30*time.Second, "the stepper to reach DONE", `document.querySelector('#stepper li[data-step="DONE"]').dataset.state === "done"`)
	if code := browsertest.Eval[string](b, `document.querySelector("#result").dataset.code`); code != "SUCCESS" {
		t.Errorf("result %q, want SUCCESS (%s)", code, b.Text("#result"))
	}
	for _, step := range []string{"RECEIVED", "QUEUED", "PROCESSING"} {
		if st := browsertest.Eval[string](b, fmt.Sprintf(`document.querySelector('#stepper li[data-step=%q]').dataset.state`, step)); st != "done" {
			t.Errorf("step %s is %q, want done", step, st)
		}
	}
	if d := b.Text("#delays"); !strings.Contains(d, "end-to-end") {
		t.Errorf("delays: %q", d)
	}
	b.WaitFor(10*time.Second, "my participations to list the request", fmt.Sprintf(`!!document.querySelector('#mine li[data-request-id=%q]')`, id))

	b.Click("#participate") // again: the same request
	b.WaitText(10*time.Second, "#message", "already participated")
	if again := b.Text("#request-id"); again != id {
		t.Errorf("second click shows %q, want %q", again, id)
	}
	b.Navigate(page) // a reload resumes it
	b.WaitFor(10*time.Second, "the resumed request", fmt.Sprintf(`document.querySelector("#request-id").textContent === %q`, id))
	b.WaitFor(10*time.Second, "DONE after the reload", `document.querySelector('#stepper li[data-step="DONE"]').dataset.state === "done"`)

	signIn(b, "second-user") // sold out for the next one
	b.WaitFor(10*time.Second, "the event for the second user", `!document.querySelector("#event").hidden && document.querySelector("#request").hidden`)
	b.Click("#participate")
	b.WaitFor(30*time.Second, "REJECTED_CAPACITY", `document.querySelector("#result").dataset.code === "REJECTED_CAPACITY"`)
	b.WaitText(5*time.Second, "#message", "Sold out")

	b.Navigate(srv.URL + "/ui/?event=nope")
	b.WaitText(10*time.Second, "#message", `There is no event "nope"`)

	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "shut", EventType: asyncevent.FirstCome, Capacity: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Admin.CloseEvent(ctx, "shut"); err != nil {
		t.Fatal(err)
	}
	b.Navigate(srv.URL + "/ui/?event=shut")
	b.WaitText(10*time.Second, "#message", "closed")
	b.Click("#participate")
	b.WaitText(10*time.Second, "#message", "This event is closed")
	b.NoErrors()

	// The server goes away: the page retries, then says so (no spinner forever).
	// The button is enabled again just after the message shows.
	b.WaitFor(5*time.Second, "Participate enabled again", `!document.querySelector("#participate").disabled`)
	srv.CloseClientConnections()
	srv.Close()
	b.Click("#participate")
	b.WaitText(20*time.Second, "#message", "cannot be reached")
}

// A lottery entry: PROCESSING while the lottery is COLLECTING, then DONE
// with the draw's answer once it is ANNOUNCED.
func TestParticipationPageLottery(t *testing.T) {
	// The services' clock runs ahead of the wall clock once the entry is
	// in: the cutoff passes at once instead of after a wait long enough
	// for Chromium to start and the page to load on a loaded machine.
	var ahead atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	env, srv := pagesStack(t, asynceventtest.Options{Admin: asyncevent.AdminConfig{DrawGrace: 10 * time.Millisecond}, Now: now})
	ctx := context.Background()
	cutoff := time.Now().Add(time.Minute)
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "raffle", EventType: asyncevent.Lottery, Title: "Raffle",
		LotteryCutoffAt: cutoff.UnixMilli(), Winners: 1}); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/?event=raffle")
	b.WaitText(10*time.Second, "#title", "Raffle")
	b.Click("#participate")
	b.WaitText(10*time.Second, "#phase", "LOTTERY COLLECTING")
	if st := browsertest.Eval[string](b, `document.querySelector('#stepper li[data-step="PROCESSING"]').dataset.state`); st != "current" {
		t.Errorf("while collecting, PROCESSING is %q, want current", st)
	}
	ahead.Store(int64(time.Until(cutoff) + time.Second))
	asynceventtest.Eventually(t, 45*time.Second, "the draw", func() (bool, error) {
		_, err := env.Admin.Draw(ctx, "raffle", "")
		return err == nil, err
	})
	b.WaitFor(30*time.Second, "the stepper to reach DONE", `document.querySelector('#stepper li[data-step="DONE"]').dataset.state === "done"`)
	b.WaitText(5*time.Second, "#phase", "LOTTERY ANNOUNCED")
	if code := browsertest.Eval[string](b, `document.querySelector("#result").dataset.code`); code != "LOTTERY_WIN" {
		t.Errorf("the only entry of a 1-winner lottery: %q, want LOTTERY_WIN", code)
	}
	b.NoErrors()
}

// The ops view shows an event's counts, DLQ candidates, capacity and
// invariant and the queue depths to an admin.
func TestOpsPage(t *testing.T) {
	env, srv := pagesStack(t, asynceventtest.Options{})
	ctx := context.Background()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ops", EventType: asyncevent.FirstCome, Title: hostile, Capacity: 3}); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ops", UserID: fmt.Sprint("u", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// A third request is stranded (RECEIVED, no message) and a worker's
	// delivery of it failed retryably: a DLQ candidate.
	env.Strand(t, "ops", "stuck")
	var stuck *asyncevent.Request
	for r, err := range env.Store.PendingRequests(ctx, "ops") {
		if err != nil {
			t.Fatal(err)
		}
		stuck = r
	}
	if err := env.Store.RecordAttempt(ctx, asyncevent.Attempt{RequestID: stuck.RequestID, Attempts: 2, Code: "ThrottlingException",
		Message: "throttled", At: stuck.LastChange() + 1}); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/ops.html?event=ops")
	b.WaitFor(30*time.Second, "both requests counted as SUCCEEDED", `document.querySelector("#by-status").textContent.includes("SUCCEEDED2")`)
	if got := b.Text("#dlq-candidates"); got != "1" {
		t.Errorf("DLQ candidates %q, want 1", got)
	}
	if got := b.Text("#remaining"); got != "1" {
		t.Errorf("capacity remaining %q, want 1", got)
	}
	if got := b.Text("#invariant"); got != "OK" {
		t.Errorf("invariant %q, want OK", got)
	}
	if got := b.Text("#title"); got != hostile {
		t.Errorf("title %q", got)
	}
	b.WaitFor(5*time.Second, "the queue depths", `/^\d+$/.test(document.querySelector("#main-depth").textContent) && /^\d+$/.test(document.querySelector("#dead-depth").textContent)`)
	b.NoErrors()
}

// Where the API serves /metrics, the ops view takes the queue depths (with
// the messages in flight), the invariant of all open events and the
// worker outcomes from it; TestOpsPage covers the fallback to the admin
// stats when there is no /metrics.
func TestOpsPageReadsMetrics(t *testing.T) {
	env := asynceventtest.New(t, asynceventtest.Options{})
	mux := pagesMux(t, env, true, nil)
	// One exposition with the API's gauges and a worker's counters, as
	// a federating scrape or a one-process stack serves them.
	reg := metrics.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	asynceventbackend.NewQueueGauge(reg, env.Queue.Counts, log)
	asynceventbackend.NewInvariant(reg, env.Operations.CheckCapacity, log)
	wm := asynceventbackend.NewWorkerMetrics(reg, 2)
	mux.Handle("GET "+metrics.Path, metrics.Handler(reg))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := context.Background()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ops", EventType: asyncevent.FirstCome, Capacity: 1, Ordering: asyncevent.OrderDelivery}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ops", UserID: fmt.Sprint("u", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// A worker that counts its outcomes as asynceventworker's handler does. It
	// runs no arrival allocator: the event above orders by delivery. Its
	// visibility timeout is long: the page must show exactly 1 succeeded and
	// 2 rejected, and a delivery slower than the timeout (DynamoDB Local
	// under the suite's load) would be redelivered and counted again (a
	// redelivery of a decided request counts as its outcome).
	handle := func(ctx context.Context, m consumer.Message) bool {
		done := wm.Start()
		out := env.Worker.Process(ctx, asyncevent.Delivery{Body: m.Body, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt})
		done(asynceventbackend.Outcome(out))
		return out.Ack
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- consumer.Run(wctx, env.Queue, handle, consumer.Config{Concurrency: 2, Wait: time.Second, Visibility: time.Minute})
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/ops.html?event=ops")
	b.WaitFor(30*time.Second, "the worker outcomes from /metrics: 1 succeeded, 2 rejected",
		`document.querySelector("#worker-outcomes").textContent.includes("succeeded1") && document.querySelector("#worker-outcomes").textContent.includes("rejected2")`)
	if src := browsertest.Eval[string](b, `document.querySelector("#queues").dataset.source`); src != "metrics" {
		t.Errorf("queue depths from %q, want metrics", src)
	}
	// The queue gauges are cached up to 5 s (asynceventbackend.NewQueueGauge) and the
	// page refreshes every 3 s: the depths reach 0 within a few refreshes.
	b.WaitFor(30*time.Second, "the queue depths at 0 after the drain",
		`["#main-depth", "#main-inflight", "#dead-depth"].every(id => document.querySelector(id).textContent === "0")`)
	if got := b.Text("#invariant-all"); got != "OK" {
		t.Errorf("invariant of all open events %q, want OK", got)
	}
	if !browsertest.Eval[bool](b, `document.querySelector("#worker-note").hidden`) {
		t.Error("the note that outcomes are elsewhere shows although /metrics has them")
	}
	b.NoErrors()
}

// "My participations" pages through more than one page (the page asks
// for 5 at a time): More until it hides, every request once, none missing.
func TestMyParticipationsPaging(t *testing.T) {
	env, srv := pagesStack(t, asynceventtest.Options{})
	ctx := context.Background()
	const n = 12
	want := map[string]bool{}
	for i := range n {
		ev := fmt.Sprintf("page%02d", i)
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: ev, EventType: asyncevent.FirstCome, Capacity: 5}); err != nil {
			t.Fatal(err)
		}
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: ev, UserID: "pager"})
		if err != nil {
			t.Fatal(err)
		}
		want[p.RequestID] = true
	}
	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/")
	b.WaitFor(10*time.Second, "the dev sign-in", `!!document.querySelector("#dev-user")`)
	signIn(b, "pager")
	const count = `document.querySelectorAll("#mine li[data-request-id]").length`
	b.WaitFor(10*time.Second, "the first page", count+` === 5`)
	for _, next := range []int{10, 12} {
		b.Click("#mine-more")
		b.WaitFor(10*time.Second, fmt.Sprintf("%d participations", next), fmt.Sprintf("%s === %d", count, next))
	}
	b.WaitFor(5*time.Second, "More to hide after the last page", `document.querySelector("#mine-more").hidden`)
	ids := browsertest.Eval[[]string](b, `[...document.querySelectorAll("#mine li[data-request-id]")].map((li) => li.dataset.requestId)`)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("request %s listed twice", id)
		}
		seen[id] = true
		if !want[id] {
			t.Errorf("request %s is not one of the user's", id)
		}
	}
	if len(seen) != n {
		t.Errorf("listed %d distinct requests, want %d", len(seen), n)
	}
	b.NoErrors()
}

// Outside dev mode the page takes its token only by postMessage from its
// parent window, and only from an allowed origin (its own, and the
// embedOrigins): a site on another origin cannot even frame it
// (frame-ancestors), an allowed one frames it and signs it in, a token in
// the URL (query or fragment) is never used, and the same-origin
// embedding signs in and participates as the token's user.
func TestSignInFromEmbeddingApp(t *testing.T) {
	env := asynceventtest.New(t, asynceventtest.Options{})
	token, err := auth.Mint(secret, auth.Principal{UserID: "embedded-user"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// host is an embedding application's page that frames the
	// participation page of the origin in its ?page= (its own if none)
	// and answers the page's token request.
	host := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><iframe id="f" src="%s/ui/?event=gig" onload="window.__loaded++"></iframe><script>
window.__posted = 0;
window.__loaded = 0;
window.addEventListener("message", (ev) => {
  const f = document.getElementById("f");
  if (ev.source === f.contentWindow && ev.data && ev.data.type === "pacer-token-request") {
    f.contentWindow.postMessage({ type: "pacer-token", token: %q }, "*");
    window.__posted++;
  }
});
</script>`, r.URL.Query().Get("page"), token)
	})
	other := httptest.NewServer(host) // another origin
	t.Cleanup(other.Close)
	// pages serves the pages (which other may frame if embedded) and
	// counts the calls that carried a token and the pages' config reads.
	pages := func(embed server.Origins) (srv *httptest.Server, bearer, configs *atomic.Int64) {
		mux := pagesMux(t, env, false, embed)
		mux.Handle("GET /host", host)
		bearer, configs = new(atomic.Int64), new(atomic.Int64)
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "" {
				bearer.Add(1)
			}
			if r.URL.Path == "/ui/config.json" {
				configs.Add(1)
			}
			mux.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv, bearer, configs
	}
	srv, bearer, configs := pages(nil)
	embedding, embeddedBearer, _ := pages(server.Origins{other.URL})
	if _, err := env.Admin.CreateEvent(context.Background(), asyncevent.NewEvent{EventID: "gig", EventType: asyncevent.FirstCome, Title: "Gig", Capacity: 5}); err != nil {
		t.Fatal(err)
	}
	env.StartWorkers(t, 1, consumer.Config{})

	b := browsertest.New(t)
	b.Navigate(other.URL + "/?page=" + srv.URL)
	b.WaitFor(20*time.Second, "the other origin's frame to load or be refused", `window.__loaded > 0`)
	time.Sleep(2 * time.Second) // a framed page would read its config and ask for the token at once
	if n, posted := configs.Load(), browsertest.Eval[int](b, `window.__posted`); n != 0 || posted != 0 {
		t.Errorf("a site on another origin framed the page: it read its config %d times and asked for a token %d times", n, posted)
	}
	if n := bearer.Load(); n != 0 {
		t.Errorf("a frame on another origin signed the page in: %d calls with its token", n)
	}
	b.Navigate(other.URL + "/?page=" + embedding.URL)
	b.WaitFor(20*time.Second, "an allowed origin's frame to ask for the token", `window.__posted > 0`)
	deadline := time.Now().Add(20 * time.Second)
	for embeddedBearer.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if embeddedBearer.Load() == 0 {
		t.Error("a page framed by an allowed origin (embedOrigins) did not sign in with the token it was handed")
	}

	before := bearer.Load()
	for _, u := range []string{"/ui/?event=gig&token=" + token, "/ui/?event=gig&access_token=" + token, "/ui/?event=gig#token=" + token} {
		b.Navigate(srv.URL + u)
		b.WaitText(10*time.Second, "#signin-state", "Waiting for sign-in")
	}
	time.Sleep(time.Second)
	if n := bearer.Load() - before; n != 0 {
		t.Errorf("a token in the URL was used: %d calls with it", n)
	}

	b.Navigate(srv.URL + "/host")
	const frame = `document.getElementById("f").contentDocument`
	b.WaitFor(20*time.Second, "the framed page to sign in", frame+`.querySelector("#signin-state")?.textContent === "Signed in as embedded-user"`)
	b.WaitFor(10*time.Second, "the framed page's event", `!!`+frame+`.querySelector("#title")?.textContent`)
	browsertest.Eval[bool](b, `(`+frame+`.querySelector("#participate").click(), true)`)
	b.WaitFor(20*time.Second, "the participation listed as the token's user's", frame+`.querySelectorAll("#mine li[data-request-id]").length === 1`)
	mine, err := env.Query.MyRequests(context.Background(), "embedded-user", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(mine.Requests) != 1 || mine.Requests[0].EventID != "gig" {
		t.Errorf("embedded-user's participations: %d, want the one in gig", len(mine.Requests))
	}
	if bearer.Load() == 0 {
		t.Error("no call carried the token")
	}
}
