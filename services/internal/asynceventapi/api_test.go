package asynceventapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/spectest"
)

var secret = []byte("asynceventapi-test-secret-32-bytes-long!")

func token(t testing.TB, user string, roles ...string) string {
	t.Helper()
	s, err := auth.Mint(secret, auth.Principal{UserID: user, Roles: roles}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return "Authorization: Bearer " + s
}

type apiEnv struct {
	*asynceventtest.Env
	api humatest.TestAPI
}

func newAPI(t *testing.T, dev bool) *apiEnv {
	t.Helper()
	env := asynceventtest.New(t, asynceventtest.Options{})
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	api := asynceventapi.NewAPI(http.NewServeMux(), deps(env), v, dev)
	return &apiEnv{Env: env, api: spectest.Wrap(t, api)}
}

func decode[T any](t testing.TB, resp *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(resp.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", resp.Body.String(), err)
	}
	return v
}

func expect(t testing.TB, resp *httptest.ResponseRecorder, status int) {
	t.Helper()
	if resp.Code != status {
		t.Fatalf("status %d, want %d: %s", resp.Code, status, resp.Body.String())
	}
}

// The committed openapi/asyncevent.yaml is what the code generates.
func TestOpenAPIUpToDate(t *testing.T) {
	var buf bytes.Buffer
	if err := asynceventapi.WriteOpenAPI(&buf); err != nil {
		t.Fatal(err)
	}
	want := buf.Bytes()
	got, err := os.ReadFile("../../../openapi/asyncevent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("openapi/asyncevent.yaml is stale: run `go run ./services/asyncevent-api openapi > openapi/asyncevent.yaml` (make openapi)")
	}
}

// The whole flow through HTTP: an admin creates an event, users
// participate, a worker decides, users and admins read the results.
func TestParticipationFlow(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	adm := token(t, "root", auth.RoleAdmin)
	closes := time.Now().Add(time.Hour).UnixMilli()
	resp := e.api.Post("/admin/events", adm, map[string]any{"eventId": "concert", "eventType": "FIRST_COME", "capacityTotal": 2, "closesAt": closes})
	expect(t, resp, http.StatusCreated)
	expect(t, e.api.Post("/admin/events", adm, map[string]any{"eventId": "concert", "eventType": "FIRST_COME", "capacityTotal": 2}), http.StatusConflict)

	var ids []string
	for i := range 5 {
		resp := e.api.Post("/events/concert/participations", token(t, fmt.Sprintf("u%d", i)))
		expect(t, resp, http.StatusAccepted)
		a := decode[asynceventapi.Accepted](t, resp)
		if a.IsDuplicate {
			t.Fatal("first participation is a duplicate")
		}
		ids = append(ids, a.RequestID)
	}
	dup := e.api.Post("/events/concert/participations", token(t, "u0"), map[string]any{})
	expect(t, dup, http.StatusAccepted)
	if a := decode[asynceventapi.Accepted](t, dup); !a.IsDuplicate || a.RequestID != ids[0] {
		t.Fatalf("duplicate: %+v", a)
	}
	// A visibility timeout longer than the test: a redelivery while a slow
	// (loaded) first delivery is still deciding would record attempt 2, and
	// the admin view below checks that a normal flow takes one attempt.
	e.StartWorkers(t, 1, consumer.Config{Visibility: 2 * time.Minute})
	results := map[string]int{}
	for i, id := range ids {
		var v asynceventapi.RequestView
		asynceventtest.Eventually(t, 20*time.Second, "request "+id+" to finish", func() (bool, error) {
			resp := e.api.Get("/requests/"+id, token(t, fmt.Sprintf("u%d", i)))
			if resp.Code != http.StatusOK {
				return false, fmt.Errorf("status %d", resp.Code)
			}
			v = decode[asynceventapi.RequestView](t, resp)
			return v.Status == "SUCCEEDED" || v.Status == "REJECTED", nil
		})
		results[v.ResultCode]++
		if len(v.Timeline) != 4 || v.QueueDelayMs < 0 || v.E2EDelayMs < v.QueueDelayMs || v.UserID != "" || v.FinishedAt == 0 {
			t.Fatalf("view %+v", v)
		}
	}
	if results["SUCCESS"] != 2 || results["REJECTED_CAPACITY"] != 3 {
		t.Fatalf("results %v", results)
	}
	// Not the owner: 404, not 403.
	expect(t, e.api.Get("/requests/"+ids[0], token(t, "u1")), http.StatusNotFound)
	expect(t, e.api.Get("/requests/"+ids[0], adm), http.StatusOK)
	resp = e.api.Get("/admin/requests/"+ids[0], adm)
	expect(t, resp, http.StatusOK)
	if v := decode[asynceventapi.RequestView](t, resp); v.UserID != "u0" || v.Attempts != 1 {
		t.Fatalf("admin view %+v", v)
	}
	resp = e.api.Get("/admin/requests/"+ids[0]+"/logs", adm)
	expect(t, resp, http.StatusOK)
	logs := decode[struct{ Logs []asynceventapi.LogView }](t, resp)
	if len(logs.Logs) != 4 || logs.Logs[3].FromStatus != "PROCESSING" {
		t.Fatalf("logs %+v", logs)
	}
	resp = e.api.Get("/me/participations?limit=20", token(t, "u3"))
	expect(t, resp, http.StatusOK)
	if p := decode[asynceventapi.RequestPage](t, resp); len(p.Items) != 1 || p.Items[0].RequestID != ids[3] || p.Cursor != "" {
		t.Fatalf("my participations %+v", p)
	}
	// Admin list: newest first, paginated with cursors, filtered by status.
	seen := map[string]bool{}
	cursor := ""
	var last int64 = 1 << 62
	for page := 0; ; page++ {
		resp := e.api.Get("/admin/events/concert/requests?limit=2&cursor="+cursor, adm)
		expect(t, resp, http.StatusOK)
		p := decode[asynceventapi.RequestPage](t, resp)
		for _, v := range p.Items {
			if seen[v.RequestID] || v.QueuedAt > last {
				t.Fatalf("page %d: %s repeated or out of order", page, v.RequestID)
			}
			seen[v.RequestID], last = true, v.QueuedAt
		}
		if cursor = p.Cursor; cursor == "" {
			break
		}
	}
	if len(seen) != 5 {
		t.Fatalf("admin list saw %d requests", len(seen))
	}
	resp = e.api.Get("/admin/events/concert/requests?status=SUCCEEDED", adm)
	expect(t, resp, http.StatusOK)
	if p := decode[asynceventapi.RequestPage](t, resp); len(p.Items) != 2 {
		t.Fatalf("SUCCEEDED filter: %d items", len(p.Items))
	}
	resp = e.api.Get("/admin/events/concert/stats", adm)
	expect(t, resp, http.StatusOK)
	if !strings.Contains(resp.Body.String(), `"capacityRemaining":0`) {
		t.Fatalf("a sold-out event's stats omit capacityRemaining: %s", resp.Body.String())
	}
	if st := decode[asynceventapi.StatsView](t, resp); !st.InvariantOK || st.CapacityRemaining == nil || *st.CapacityRemaining != 0 || st.ByStatus["SUCCEEDED"] != 2 || st.ByResultCode["REJECTED_CAPACITY"] != 3 {
		t.Fatalf("stats %+v", st)
	}
	resp = e.api.Get("/admin/dlq", adm)
	expect(t, resp, http.StatusOK)
	// A user is not an admin.
	expect(t, e.api.Get("/admin/events/concert/stats", token(t, "u1")), http.StatusForbidden)
}

// Hostile input gets a 4xx problem+json and writes nothing.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	forged, _ := auth.Mint([]byte("another-secret-that-is-32-bytes-long!!"), auth.Principal{UserID: "u1"}, time.Hour)
	expired, _ := auth.Mint(secret, auth.Principal{UserID: "u1"}, -time.Hour)
	user := token(t, "u1")
	post := func(path string, body any, headers ...any) func() *httptest.ResponseRecorder {
		return func() *httptest.ResponseRecorder {
			args := append([]any{}, headers...)
			if body != nil {
				args = append(args, body)
			}
			return e.api.Post(path, args...)
		}
	}
	get := func(path string, headers ...any) func() *httptest.ResponseRecorder {
		return func() *httptest.ResponseRecorder { return e.api.Get(path, headers...) }
	}
	e.Calls.Reset()
	for _, c := range []struct {
		name   string
		do     func() *httptest.ResponseRecorder
		status int
		field  string // the error must name it
	}{
		{"no token", post("/events/ev/participations", nil), 401, ""},
		{"forged token", post("/events/ev/participations", nil, "Authorization: Bearer "+forged), 401, ""},
		{"expired token", post("/events/ev/participations", nil, "Authorization: Bearer "+expired), 401, ""},
		{"dev header outside dev mode", post("/events/ev/participations", nil, server.DevUserHeader+": eve"), 401, ""},
		{"userId in body", post("/events/ev/participations", map[string]any{"userId": "eve"}, user), 422, "userId"},
		{"malformed JSON", post("/events/ev/participations", strings.NewReader("{"), user, "Content-Type: application/json"), 400, ""},
		{"huge body", post("/events/ev/participations", strings.NewReader(`{"x":"`+strings.Repeat("a", 4096)+`"}`), user, "Content-Type: application/json"), 413, ""},
		{"id with #", post("/events/a%23b/participations", nil, user), 422, "path.eventId"},
		{"id with %", post("/events/a%2525/participations", nil, user), 422, "path.eventId"},
		{"id with control char", post("/events/a%0Ab/participations", nil, user), 422, "path.eventId"},
		{"overlong id", post("/events/"+strings.Repeat("e", 65)+"/participations", nil, user), 422, "path.eventId"},
		{"unknown event", post("/events/nope/participations", nil, user), 404, ""},
		{"bad request id", get("/requests/r%23x", user), 422, "path.requestId"},
		{"bad cursor", get("/me/participations?cursor=garbage", user), 400, ""},
		{"tampered cursor", get("/me/participations?cursor=eyJ2IjoxfQ.AAAA", user), 400, ""},
		{"limit 0", get("/me/participations?limit=0", user), 422, "query.limit"},
		{"limit 1000", get("/me/participations?limit=1000", user), 422, "query.limit"},
		{"user on admin route", post("/admin/events", map[string]any{"eventId": "x", "eventType": "FIRST_COME", "capacityTotal": 1}, user), 403, ""},
		{"bad event type", post("/admin/events", map[string]any{"eventId": "x", "eventType": "RAFFLE"}, token(t, "a", auth.RoleAdmin)), 422, "body.eventType"},
		{"event without capacity", post("/admin/events", map[string]any{"eventId": "x", "eventType": "FIRST_COME"}, token(t, "a", auth.RoleAdmin)), 422, ""},
		// A cutoff near MaxInt64 overflowed cutoff + grace: the draw could start at once.
		{"cutoff beyond year 9999", post("/admin/events", map[string]any{"eventId": "x", "eventType": "LOTTERY", "winners": 1, "lotteryCutoffAt": int64(math.MaxInt64)}, token(t, "a", auth.RoleAdmin)), 422, "lotteryCutoffAt"},
		{"closesAt beyond year 9999", post("/admin/events", map[string]any{"eventId": "x", "eventType": "FIRST_COME", "capacityTotal": 1, "closesAt": int64(math.MaxInt64)}, token(t, "a", auth.RoleAdmin)), 422, "closesAt"},
		{"title with control char", post("/admin/events", map[string]any{"eventId": "x", "eventType": "FIRST_COME", "capacityTotal": 1, "title": "a\x00b"}, token(t, "a", auth.RoleAdmin)), 422, "title"},
		{"title with a bidi override", post("/admin/events", map[string]any{"eventId": "x", "eventType": "FIRST_COME", "capacityTotal": 1, "title": "a\u202eb"}, token(t, "a", auth.RoleAdmin)), 422, "title"},
		{"capacity written 5e0", post("/admin/events", strings.NewReader(`{"eventId":"x","eventType":"FIRST_COME","capacityTotal":5e0}`), token(t, "a", auth.RoleAdmin), "Content-Type: application/json"), 422, "body.capacityTotal"},
		{"capacity given twice", post("/admin/events", strings.NewReader(`{"eventId":"x","eventType":"FIRST_COME","capacityTotal":-1,"capacityTotal":5}`), token(t, "a", auth.RoleAdmin), "Content-Type: application/json"), 400, "body.capacityTotal"},
		{"title not UTF-8", post("/admin/events", strings.NewReader("{\"eventId\":\"x\",\"eventType\":\"FIRST_COME\",\"capacityTotal\":1,\"title\":\"\xff\xfe\"}"), token(t, "a", auth.RoleAdmin), "Content-Type: application/json"), 400, "UTF-8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := c.do()
			if resp.Code != c.status {
				t.Fatalf("status %d, want %d: %s", resp.Code, c.status, resp.Body.String())
			}
			if ct := resp.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
				t.Fatalf("content type %q", ct)
			}
			if c.field != "" && !strings.Contains(resp.Body.String(), c.field) {
				t.Fatalf("error does not name %s: %s", c.field, resp.Body.String())
			}
		})
	}
	if n := e.Calls.Count("DynamoDB.TransactWriteItems") + e.Calls.Count("DynamoDB.PutItem") + e.Calls.Count("DynamoDB.UpdateItem") + e.Calls.Count("SQS.SendMessage"); n != 0 {
		t.Fatalf("hostile input wrote: %s", e.Calls)
	}
}

// In dev mode the dev header stands in for a token.
func TestDevHeader(t *testing.T) {
	t.Parallel()
	e := newAPI(t, true)
	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	resp := e.api.Post("/events/ev/participations", server.DevUserHeader+": dev-user")
	expect(t, resp, http.StatusAccepted)
	id := decode[asynceventapi.Accepted](t, resp).RequestID
	resp = e.api.Get("/requests/"+id, server.DevUserHeader+": dev-user")
	expect(t, resp, http.StatusOK)
	expect(t, e.api.Get("/requests/"+id, server.DevUserHeader+": someone-else"), http.StatusNotFound)
}

// Problems never reveal internals (package prefixes, AWS error text, table
// or queue names), even when the cause is an AWS error: a cursor from
// another list, concurrent redrives (SQS refuses a second move task; that
// is a 409, not a 503).
func TestProblemsRevealNoInternals(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	for _, ev := range []string{"ev", "other"} {
		if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome(ev)); err != nil {
			t.Fatal(err)
		}
	}
	adm := token(t, "root", auth.RoleAdmin)
	for i := range 3 {
		expect(t, e.api.Post("/events/ev/participations", token(t, fmt.Sprintf("u%d", i))), http.StatusAccepted)
	}
	cursor := decode[asynceventapi.RequestPage](t, e.api.Get("/admin/events/ev/requests?limit=1", adm)).Cursor
	var resps []*httptest.ResponseRecorder
	resps = append(resps,
		e.api.Get("/me/participations?cursor="+cursor, token(t, "u1")),
		e.api.Get("/admin/events/other/requests?cursor="+cursor, adm))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			r := e.api.Post("/admin/dlq/redrive", adm)
			mu.Lock()
			resps = append(resps, r)
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, r := range resps {
		body := r.Body.String()
		if r.Code >= 500 {
			t.Errorf("status %d: %s", r.Code, body)
		}
		for _, leak := range []string{"ddb:", "dynamostore", "sqsqueue", "asyncevent:", "operation error", "api error", e.QueueName, "arn:", "AsyncEvent"} {
			if strings.Contains(body, leak) {
				t.Errorf("status %d reveals %q: %s", r.Code, leak, body)
			}
		}
		if r.Code == http.StatusBadRequest && !strings.Contains(body, "query.cursor") {
			t.Errorf("cursor error does not name query.cursor: %s", body)
		}
		if r.Code != http.StatusAccepted && r.Code != http.StatusBadRequest && r.Code != http.StatusConflict {
			t.Errorf("status %d: %s", r.Code, body)
		}
	}
}

// The sweep is an admin operation and reports what it found.
func TestSweepEndpoint(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	expect(t, e.api.Post("/events/ev/participations", token(t, "u1")), http.StatusAccepted)
	expect(t, e.api.Post("/admin/requests/sweep", token(t, "u1")), http.StatusForbidden)
	res := decode[asyncevent.SweepResult](t, e.api.Post("/admin/requests/sweep", token(t, "root", auth.RoleAdmin)))
	if res != (asyncevent.SweepResult{}) {
		t.Fatalf("sweep with nothing stranded: %+v", res)
	}
	// One event's sweep, of any age; an unknown event is 404.
	res = decode[asyncevent.SweepResult](t, e.api.Post("/admin/requests/sweep?eventId=ev", token(t, "root", auth.RoleAdmin)))
	if res != (asyncevent.SweepResult{}) {
		t.Fatalf("sweep of the event with nothing stranded: %+v", res)
	}
	expect(t, e.api.Post("/admin/requests/sweep?eventId=nope", token(t, "root", auth.RoleAdmin)), http.StatusNotFound)
	expect(t, e.api.Post("/admin/requests/sweep?eventId=bad%23id", token(t, "root", auth.RoleAdmin)), http.StatusUnprocessableEntity)
}

// An unknown event's request list is 404, like its stats, not an empty 200.
func TestAdminListOfUnknownEventIs404(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	adm := token(t, "root", auth.RoleAdmin)
	expect(t, e.api.Get("/admin/events/nope/requests", adm), http.StatusNotFound)
	expect(t, e.api.Get("/admin/events/nope/stats", adm), http.StatusNotFound)
}

// POST /admin/events/{id}/close: admins only; afterwards a participation is
// a 409 event-closed problem, but a repeat of one accepted before gets its
// requestId; a lottery cannot be closed.
func TestCloseEventEndpoint(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	adm := token(t, "root", auth.RoleAdmin)
	expect(t, e.api.Post("/admin/events/ev/close", token(t, "u1")), http.StatusForbidden)
	resp := e.api.Post("/events/ev/participations", token(t, "u1"))
	expect(t, resp, http.StatusAccepted)
	first := decode[asynceventapi.Accepted](t, resp)

	resp = e.api.Post("/admin/events/ev/close", adm)
	expect(t, resp, http.StatusOK)
	if v := decode[map[string]any](t, resp); v["status"] != "CLOSED" {
		t.Fatalf("close returned %v", v)
	}
	expect(t, e.api.Post("/admin/events/ev/close", adm), http.StatusOK)

	resp = e.api.Post("/events/ev/participations", token(t, "u1"))
	expect(t, resp, http.StatusAccepted)
	if again := decode[asynceventapi.Accepted](t, resp); again.RequestID != first.RequestID || !again.IsDuplicate {
		t.Fatalf("repeat after the close: %+v, want %s as a duplicate", again, first.RequestID)
	}

	resp = e.api.Post("/events/ev/participations", token(t, "u2"))
	expect(t, resp, http.StatusConflict)
	if p := decode[map[string]any](t, resp); p["type"] != server.ProblemBase+"event-closed" {
		t.Fatalf("participation after close: %v", p)
	}

	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent.NewEvent{EventID: "lot", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	resp = e.api.Post("/admin/events/lot/close", adm)
	expect(t, resp, http.StatusConflict)
	if p := decode[map[string]any](t, resp); p["type"] != server.ProblemBase+"not-first-come" {
		t.Fatalf("closing a lottery: %v", p)
	}
	expect(t, e.api.Post("/admin/events/nope/close", adm), http.StatusNotFound)
}

// POST /admin/requests/{id}/requeue re-queues a request whose enqueue
// failed, admins only; anything else is 409 not-requeueable. The sweep
// counts such requests and re-queues them only with failedEnqueue=requeue.
func TestRequeueEndpoint(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	adm := token(t, "root", auth.RoleAdmin)
	e.SQS.SetSendFault(asynceventtest.Throttle)
	failed := decode[map[string]any](t, e.api.Post("/events/ev/participations", token(t, "u1")))
	other := decode[map[string]any](t, e.api.Post("/events/ev/participations", token(t, "u2")))
	e.SQS.SetSendFault(nil)
	id, _ := failed["requestId"].(string)

	res := decode[asyncevent.SweepResult](t, e.api.Post("/admin/requests/sweep", adm))
	if res != (asyncevent.SweepResult{FailedEnqueue: 2}) {
		t.Fatalf("sweep: %+v", res)
	}
	expect(t, e.api.Post("/admin/requests/"+id+"/requeue", token(t, "u1")), http.StatusForbidden)
	resp := e.api.Post("/admin/requests/"+id+"/requeue", adm)
	expect(t, resp, http.StatusOK)
	if v := decode[map[string]any](t, resp); v["status"] != "QUEUED" {
		t.Fatalf("re-queued: %v", v)
	}
	resp = e.api.Post("/admin/requests/"+id+"/requeue", adm)
	expect(t, resp, http.StatusConflict)
	if p := decode[map[string]any](t, resp); p["type"] != server.ProblemBase+"not-requeueable" {
		t.Fatalf("second re-queue: %v", p)
	}
	expect(t, e.api.Post("/admin/requests/01M8ANM06JJ2G6K2AP2SMAK93R/requeue", adm), http.StatusNotFound)
	expect(t, e.api.Post("/admin/requests/sweep?failedEnqueue=bogus", adm), http.StatusUnprocessableEntity)
	res = decode[asyncevent.SweepResult](t, e.api.Post("/admin/requests/sweep?failedEnqueue=requeue", adm))
	if res != (asyncevent.SweepResult{FailedEnqueue: 1, FailedEnqueueRequeued: 1}) {
		t.Fatalf("sweep with re-queue: %+v", res)
	}
	if r := e.Request(t, other["requestId"].(string)); r.Status != asyncevent.StatusQueued {
		t.Fatalf("u2 after the sweep: %s", r.Status)
	}
}

// GET /healthz answers without a token (load balancers have none); every
// other route still requires one.
func TestHealthNeedsNoToken(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	resp := e.api.Get("/healthz")
	expect(t, resp, http.StatusOK)
	if got := decode[struct{ Status string }](t, resp); got.Status != "ok" {
		t.Fatalf("health %s", resp.Body.String())
	}
	expect(t, e.api.Get("/me/participations"), http.StatusUnauthorized)
}

// drawAPI is the API over a test's own stack whose draws may start 1 ms
// after the cutoff.
func drawAPI(t *testing.T) (*asynceventtest.Env, humatest.TestAPI) {
	t.Helper()
	env := asynceventtest.New(t, asynceventtest.Options{Admin: asyncevent.AdminConfig{DrawGrace: time.Millisecond}})
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return env, spectest.Wrap(t, asynceventapi.NewAPI(http.NewServeMux(), deps(env), v, false))
}

// A draw given a seed that does not hash to the event's commitment is a
// 422 naming body.seed, and draws nothing.
func TestDrawWithTheWrongSeedNamesIt(t *testing.T) {
	t.Parallel()
	env, api := drawAPI(t)
	seed := strings.Repeat("ab", 32)
	if _, err := env.Admin.CreateEvent(context.Background(), asyncevent.NewEvent{EventID: "raffle", EventType: asyncevent.Lottery,
		Winners: 1, LotteryCutoffAt: time.Now().Add(50 * time.Millisecond).UnixMilli(), SeedCommitment: asyncevent.Commit([]byte(seed))}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	admin := token(t, "a", auth.RoleAdmin)
	resp := api.Post("/admin/events/raffle/draw", admin, map[string]any{"seed": strings.Repeat("cd", 32)})
	expect(t, resp, http.StatusUnprocessableEntity)
	if p := decode[huma.ErrorModel](t, resp); len(p.Errors) != 1 || p.Errors[0].Location != "body.seed" {
		t.Fatalf("problem %s, want one error at body.seed", resp.Body.String())
	}
	if ev, err := env.Admin.GetEvent(context.Background(), "raffle"); err != nil || ev.Status != asyncevent.EventOpen {
		t.Fatalf("event after a refused draw: %+v %v", ev, err)
	}
}

// A lottery request's view shows when the draw was scheduled to be
// announced (announcedAt) and, once drawn, when the draw decided it
// (drawnAt); before the draw there is no drawnAt.
func TestRequestViewShowsWhenItWasDrawn(t *testing.T) {
	t.Parallel()
	env, api := drawAPI(t)
	cutoff := time.Now().Add(2 * time.Second).UnixMilli()
	announce := cutoff + time.Hour.Milliseconds()
	if _, err := env.Admin.CreateEvent(context.Background(), asyncevent.NewEvent{EventID: "raffle", EventType: asyncevent.Lottery,
		Winners: 1, LotteryCutoffAt: cutoff, AnnouncedAt: announce}); err != nil {
		t.Fatal(err)
	}
	resp := api.Post("/events/raffle/participations", token(t, "u1"))
	expect(t, resp, http.StatusAccepted)
	id := decode[struct{ RequestID string }](t, resp).RequestID
	env.StartWorkers(t, 1, consumer.Config{})
	get := func() asynceventapi.RequestView {
		resp := api.Get("/requests/"+id, token(t, "u1"))
		expect(t, resp, http.StatusOK)
		return decode[asynceventapi.RequestView](t, resp)
	}
	deadline := time.Now().Add(20 * time.Second)
	for r := get(); r.UIPhase != string(asyncevent.PhaseCollecting); r = get() {
		if time.Now().After(deadline) {
			t.Fatalf("the entry was not collected: %+v", r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if r := get(); r.AnnouncedAt != announce || r.DrawnAt != 0 {
		t.Fatalf("before the draw: announcedAt %d drawnAt %d, want %d and none", r.AnnouncedAt, r.DrawnAt, announce)
	}
	time.Sleep(time.Until(time.UnixMilli(cutoff + 10)))
	expect(t, api.Post("/admin/events/raffle/draw", token(t, "a", auth.RoleAdmin), map[string]any{}), http.StatusOK)
	if r := get(); r.ResultCode != string(asyncevent.CodeLotteryWin) || r.DrawnAt == 0 || r.DrawnAt != r.FinishedAt || r.AnnouncedAt != announce {
		t.Fatalf("after the draw: %+v; want the win, drawnAt = finishedAt, announcedAt %d", r, announce)
	}
}
