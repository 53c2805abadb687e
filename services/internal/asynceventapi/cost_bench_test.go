package asynceventapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/internal/awsfixture"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
)

// The cost benchmarks measure what Pacer's API spends per operation
// against a bare baseline doing the same necessary work the plain way
// (bareAPI), both against internal/awsfixture, which answers every AWS
// call at once: the ratio impl=pacer / impl=bare is Pacer's overhead, the
// same on any machine (make bench prints it). Both sides make the same
// AWS calls with the same inputs (TestBareSendsWhatPacerSends).

const (
	costTable = "AsyncEventTable"
	costQueue = "asyncevent-participation"
	costEvent = "e1"
	costUser  = "user-1"
	costReqID = "01M8FFQ73T18893C7W07K1YDPF"
	// costCandID is an arrival candidate of costUser queued an hour ahead
	// of the fixture's clock, so that its pollAt stays ahead for as long
	// as a benchmark runs.
	costCandID = "01M8FFQ73T18893C7W07K1YDPG"
)

var costSecret = []byte("cost-benchmark-secret-of-32-bytes!")

// costNow is when the fixture's event and request were made.
var costNow = time.Now().UnixMilli()

// costFixture is the fixture with the event (FIRST_COME, delivery, open
// for an hour), one QUEUED request of costUser to read and one arrival
// candidate (costCandID).
func costFixture() *awsfixture.Server {
	f := awsfixture.New()
	now := costNow
	event := json.RawMessage(fmt.Sprintf(`{"Item":{"PK":{"S":"EVENT#%[1]s"},"SK":{"S":"CONFIG"},"entityType":{"S":"EVENT_CONFIG"},"eventId":{"S":"%[1]s"},`+
		`"eventType":{"S":"FIRST_COME"},"status":{"S":"OPEN"},"capacityTotal":{"N":"100"},"ordering":{"S":"delivery"},"closesAt":{"N":"%[2]d"},"createdAt":{"N":"%[3]d"}}}`,
		costEvent, now+3600_000, now))
	request := requestItem(costReqID, "QUEUED", "", now+1)
	candidate := requestItem(costCandID, "PROCESSING", "ALLOCATING", now+3600_000)
	capacity := json.RawMessage(fmt.Sprintf(`{"Item":{"PK":{"S":"EVENT#%s"},"SK":{"S":"CAPACITY"},"entityType":{"S":"CAPACITY"},"eventId":{"S":"%[1]s"},`+
		`"capacityTotal":{"N":"100"},"capacityRemaining":{"N":"60"},"updatedAt":{"N":"%d"}}}`, costEvent, now))
	f.Handle("DynamoDB.GetItem", func(body []byte) any {
		switch b := string(body); {
		case strings.Contains(b, `"S":"LINE"`):
			return json.RawMessage(`{}`) // no line measured: a delivery event has none
		case strings.Contains(b, `"S":"CAPACITY"`):
			return capacity
		case strings.Contains(b, `"EVENT#`+costEvent+`"`):
			return event
		case strings.Contains(b, costCandID):
			return candidate
		}
		return request
	})
	return f
}

// requestItem is the GetItem answer of costUser's request id of costEvent
// in status (and uiPhase, if not ""), queued at queuedAt.
func requestItem(id, status, phase string, queuedAt int64) json.RawMessage {
	started, ph := "", ""
	if status == "PROCESSING" {
		started = fmt.Sprintf(`"startedAt":{"N":"%d"},`, queuedAt+1)
	}
	if phase != "" {
		ph = fmt.Sprintf(`"uiPhase":{"S":%q},`, phase)
	}
	return json.RawMessage(fmt.Sprintf(`{"Item":{"PK":{"S":"REQ#%[1]s"},"SK":{"S":"META"},"entityType":{"S":"REQUEST"},"requestId":{"S":"%[1]s"},`+
		`"eventId":{"S":"%[2]s"},"userId":{"S":"%[3]s"},"eventType":{"S":"FIRST_COME"},"status":{"S":%[7]q},%[8]s%[9]s"uiResult":{"S":"PENDING"},`+
		`"requestedAt":{"N":"%[4]d"},"queuedAt":{"N":"%[5]d"},"idempotencyKey":{"S":"IDEMP#%[2]s#%[3]s"},"ttl":{"N":"%[6]d"},`+
		`"GSI1PK":{"S":"USER#%[3]s"},"GSI1SK":{"S":"QAT#%[5]d#REQ#%[1]s"},"GSI2PK":{"S":"EVENT#%[2]s"},"GSI2SK":{"S":"QAT#%[5]d#REQ#%[1]s"}}}`,
		id, costEvent, costUser, queuedAt-1, queuedAt, queuedAt/1000+86400, status, ph, started))
}

// pacerCost is Pacer's API as Run serves it (newHandler), over f.
func pacerCost(tb testing.TB, f *awsfixture.Server) http.Handler {
	tb.Helper()
	awsCfg := f.Config()
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: costSecret})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Config: asynceventbackend.Config{Table: costTable, Queue: costQueue, AWS: &awsCfg, CursorKey: costSecret,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, Verifier: v}
	h, err := newHandler(context.Background(), &cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return h.handler
}

// bareCost is the baseline over f.
func bareCost(f *awsfixture.Server) http.Handler {
	awsCfg := f.Config()
	return newBareAPI(awsclient.DynamoDB(awsCfg), awsclient.SQS(awsCfg), costTable, f.URL()+"/000000000000/"+costQueue, costSecret).handler()
}

// costCall makes one request to h as costUser and checks the status.
// A call with revalidate set sends If-None-Match with the ETag of an
// answer to the same request before it.
type costCall struct {
	method, path string
	status       int
	revalidate   bool
}

var (
	participateCall = costCall{http.MethodPost, "/events/" + costEvent + "/participations", http.StatusAccepted, false}
	pollCall        = costCall{http.MethodGet, "/requests/" + costReqID, http.StatusOK, false}
	// revalidateCall reads the request and finds it as tagged: 304.
	revalidateCall = costCall{http.MethodGet, "/requests/" + costReqID, http.StatusNotModified, true}
	// unchangedCall is a candidate's poll before its pollAt: 304, no read.
	unchangedCall = costCall{http.MethodGet, "/requests/" + costCandID, http.StatusNotModified, true}
)

func costToken(tb testing.TB) string {
	tok, err := auth.Mint(costSecret, auth.Principal{UserID: costUser}, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// tag is the ETag of an answer to c's request without If-None-Match.
func (c costCall) tag(tb testing.TB, h http.Handler, tok string) string {
	plain := costCall{c.method, c.path, http.StatusOK, false}
	etag := plain.do(tb, h, tok, "").Header().Get("ETag")
	if etag == "" {
		tb.Fatalf("%s %s: no ETag", c.method, c.path)
	}
	return etag
}

func (c costCall) do(tb testing.TB, h http.Handler, tok, ifNoneMatch string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(c.method, c.path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if ifNoneMatch != "" {
		req.Header.Set("If-None-Match", ifNoneMatch)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != c.status {
		tb.Fatalf("%s %s: %d %s, want %d", c.method, c.path, rec.Code, rec.Body, c.status)
	}
	return rec
}

// costSide is one side of a pair (impl "pacer" or "bare") over its own
// fixture, ready to make c: its handler, the caller's token and, for a
// revalidating call, the ETag to send.
type costSide struct {
	f         *awsfixture.Server
	h         http.Handler
	tok, etag string
}

func newCostSide(tb testing.TB, impl string, c costCall) costSide {
	f := costFixture()
	tb.Cleanup(f.Close)
	s := costSide{f: f, h: bareCost(f), tok: costToken(tb)}
	if impl == "pacer" {
		s.h = pacerCost(tb, f)
	}
	if c.revalidate {
		s.etag = c.tag(tb, s.h, s.tok)
	}
	return s
}

// benchCost runs c against Pacer and bare as sub-benchmarks impl=pacer
// and impl=bare, and reports AWS calls per operation.
func benchCost(b *testing.B, c costCall) {
	for _, impl := range []string{"pacer", "bare"} {
		b.Run("impl="+impl, func(b *testing.B) {
			s := newCostSide(b, impl, c)
			c.do(b, s.h, s.tok, s.etag) // warm: Pacer reads the event once
			s.f.Reset()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				c.do(b, s.h, s.tok, s.etag)
				n++
			}
			b.ReportMetric(float64(s.f.Total())/float64(n), "aws-calls/op")
		})
	}
}

// BenchmarkParticipateCost is a new participation: the lock and request
// transaction, the send, the QUEUED transaction (3 AWS calls).
func BenchmarkParticipateCost(b *testing.B) { benchCost(b, participateCall) }

// BenchmarkPollCost is the status poll of a QUEUED request: one GetItem,
// the answer and its ETag.
func BenchmarkPollCost(b *testing.B) { benchCost(b, pollCall) }

// BenchmarkPollRevalidateCost is the poll of a QUEUED request with the
// ETag of the answer before: one GetItem, then 304 with no body.
func BenchmarkPollRevalidateCost(b *testing.B) { benchCost(b, revalidateCall) }

// BenchmarkPollUnchangedCost is the poll of an arrival candidate before
// its pollAt with the ETag of the answer before: 304 without a read.
func BenchmarkPollUnchangedCost(b *testing.B) { benchCost(b, unchangedCall) }

// TestBareSendsWhatPacerSends holds the baseline to Pacer's work: for a
// participation both make the same AWS calls in the same order, with the
// same items' attributes and the same expressions; for a poll the same
// read, and the same fields in the answer (Pacer adds only Huma's
// $schema). A baseline that did less would flatter Pacer's ratio.
func TestBareSendsWhatPacerSends(t *testing.T) {
	run := func(impl string, c costCall) ([]string, map[string]any) {
		side := newCostSide(t, impl, c)
		f, h, tok := side.f, side.h, side.tok
		c.do(t, h, tok, "") // warm (Pacer reads the event once)
		var r *awsfixture.Recording
		if c == participateCall {
			r = f.Record("DynamoDB.TransactWriteItems", "SQS.SendMessage")
		}
		f.Reset()
		rec := c.do(t, h, tok, "")
		var answer map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Fatalf("%s %s: %v: %s", impl, c.path, err, rec.Body)
		}
		delete(answer, "$schema")
		if n := f.Total(); n != map[bool]int{true: 3, false: 1}[c == participateCall] {
			t.Errorf("%s %s: %d AWS calls", impl, c.path, n)
		}
		if r == nil {
			return nil, answer
		}
		return r.Shapes(), answer
	}
	pacer, pacerAnswer := run("pacer", participateCall)
	bare, bareAnswer := run("bare", participateCall)
	if len(pacer) != 3 || !slices.Equal(pacer, bare) {
		t.Errorf("a participation's calls differ:\npacer:\n%s\nbare:\n%s", strings.Join(pacer, "\n"), strings.Join(bare, "\n"))
	}
	if !slices.Equal(slices.Sorted(maps.Keys(pacerAnswer)), slices.Sorted(maps.Keys(bareAnswer))) {
		t.Errorf("participation answers differ: pacer %v, bare %v", pacerAnswer, bareAnswer)
	}
	_, pacerAnswer = run("pacer", pollCall)
	_, bareAnswer = run("bare", pollCall)
	// The baseline does not show the request's place in line (Pacer's
	// poll reads the event's line and capacity once a second, not per
	// poll): its answer is Pacer's without it.
	if place, ok := pacerAnswer["place"].(map[string]any); !ok || place["kind"] != "delivery" {
		t.Errorf("Pacer's poll of a QUEUED request of a delivery event shows place %v", pacerAnswer["place"])
	}
	delete(pacerAnswer, "place")
	pacerJSON, _ := json.Marshal(pacerAnswer)
	bareJSON, _ := json.Marshal(bareAnswer)
	if string(pacerJSON) != string(bareJSON) {
		t.Errorf("poll answers differ:\npacer %s\nbare  %s", pacerJSON, bareJSON)
	}
}

// TestBarePollsAsPacerDoes holds the baseline's conditional polls to
// Pacer's: for a plain poll, a revalidation and a candidate's poll before
// its pollAt, the same status, Retry-After and Cache-Control, an ETag,
// and the same reads (one, one, none).
func TestBarePollsAsPacerDoes(t *testing.T) {
	answer := func(impl string, c costCall) (http.Header, int, int) {
		s := newCostSide(t, impl, c)
		if !c.revalidate {
			pollCall.do(t, s.h, s.tok, "") // warm: Pacer reads the event's line once a second
		}
		s.f.Reset()
		rec := c.do(t, s.h, s.tok, s.etag)
		return rec.Header(), rec.Code, s.f.Total()
	}
	for _, c := range []struct {
		call  costCall
		reads int
	}{{pollCall, 1}, {revalidateCall, 1}, {unchangedCall, 0}} {
		ph, pcode, preads := answer("pacer", c.call)
		bh, bcode, breads := answer("bare", c.call)
		if preads != c.reads || breads != c.reads {
			t.Errorf("%s (revalidate %v): %d reads by Pacer, %d by bare; want %d", c.call.path, c.call.revalidate, preads, breads, c.reads)
		}
		if pcode != bcode {
			t.Errorf("%s: status %d by Pacer, %d by bare", c.call.path, pcode, bcode)
		}
		for _, k := range []string{"Retry-After", "Cache-Control"} {
			if ph.Get(k) != bh.Get(k) {
				t.Errorf("%s (revalidate %v): %s %q by Pacer, %q by bare", c.call.path, c.call.revalidate, k, ph.Get(k), bh.Get(k))
			}
		}
		// The tags differ: Pacer's covers the request's place in line,
		// which the baseline does not show.
		if ph.Get("ETag") == "" || bh.Get("ETag") == "" {
			t.Errorf("%s: ETag %q by Pacer, %q by bare", c.call.path, ph.Get("ETag"), bh.Get("ETag"))
		}
	}
}
