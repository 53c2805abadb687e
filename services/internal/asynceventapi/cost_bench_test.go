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
)

var costSecret = []byte("cost-benchmark-secret-of-32-bytes!")

// costNow is when the fixture's event and request were made.
var costNow = time.Now().UnixMilli()

// costFixture is the fixture with the event (FIRST_COME, delivery, open
// for an hour) and one QUEUED request of costUser to read.
func costFixture() *awsfixture.Server {
	f := awsfixture.New()
	now := costNow
	event := json.RawMessage(fmt.Sprintf(`{"Item":{"PK":{"S":"EVENT#%[1]s"},"SK":{"S":"CONFIG"},"entityType":{"S":"EVENT_CONFIG"},"eventId":{"S":"%[1]s"},`+
		`"eventType":{"S":"FIRST_COME"},"status":{"S":"OPEN"},"capacityTotal":{"N":"100"},"ordering":{"S":"delivery"},"closesAt":{"N":"%[2]d"},"createdAt":{"N":"%[3]d"}}}`,
		costEvent, now+3600_000, now))
	request := json.RawMessage(fmt.Sprintf(`{"Item":{"PK":{"S":"REQ#%[1]s"},"SK":{"S":"META"},"entityType":{"S":"REQUEST"},"requestId":{"S":"%[1]s"},`+
		`"eventId":{"S":"%[2]s"},"userId":{"S":"%[3]s"},"eventType":{"S":"FIRST_COME"},"status":{"S":"QUEUED"},"uiResult":{"S":"PENDING"},`+
		`"requestedAt":{"N":"%[4]d"},"queuedAt":{"N":"%[5]d"},"idempotencyKey":{"S":"IDEMP#%[2]s#%[3]s"},"ttl":{"N":"%[6]d"},`+
		`"GSI1PK":{"S":"USER#%[3]s"},"GSI1SK":{"S":"QAT#%[5]d#REQ#%[1]s"},"GSI2PK":{"S":"EVENT#%[2]s"},"GSI2SK":{"S":"QAT#%[5]d#REQ#%[1]s"}}}`,
		costReqID, costEvent, costUser, now, now+1, now/1000+86400))
	f.Handle("DynamoDB.GetItem", func(body []byte) any {
		if strings.Contains(string(body), `"EVENT#`+costEvent+`"`) {
			return event
		}
		return request
	})
	return f
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
type costCall struct {
	method, path string
	status       int
}

var (
	participateCall = costCall{http.MethodPost, "/events/" + costEvent + "/participations", http.StatusAccepted}
	pollCall        = costCall{http.MethodGet, "/requests/" + costReqID, http.StatusOK}
)

func costToken(tb testing.TB) string {
	tok, err := auth.Mint(costSecret, auth.Principal{UserID: costUser}, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

func (c costCall) do(tb testing.TB, h http.Handler, tok string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(c.method, c.path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != c.status {
		tb.Fatalf("%s %s: %d %s, want %d", c.method, c.path, rec.Code, rec.Body, c.status)
	}
	return rec
}

// benchCost runs c against Pacer and bare as sub-benchmarks impl=pacer
// and impl=bare, and reports AWS calls per operation.
func benchCost(b *testing.B, c costCall) {
	for _, impl := range []string{"pacer", "bare"} {
		b.Run("impl="+impl, func(b *testing.B) {
			f := costFixture()
			defer f.Close()
			h := bareCost(f)
			if impl == "pacer" {
				h = pacerCost(b, f)
			}
			tok := costToken(b)
			c.do(b, h, tok) // warm: Pacer reads the event once
			f.Reset()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				c.do(b, h, tok)
				n++
			}
			b.ReportMetric(float64(f.Total())/float64(n), "aws-calls/op")
		})
	}
}

// BenchmarkParticipateCost is a new participation: the lock and request
// transaction, the send, the QUEUED transaction (3 AWS calls).
func BenchmarkParticipateCost(b *testing.B) { benchCost(b, participateCall) }

// BenchmarkPollCost is the status poll of a QUEUED request: one GetItem.
func BenchmarkPollCost(b *testing.B) { benchCost(b, pollCall) }

// TestBareSendsWhatPacerSends holds the baseline to Pacer's work: for a
// participation both make the same AWS calls in the same order, with the
// same items' attributes and the same expressions; for a poll the same
// read, and the same fields in the answer (Pacer adds only Huma's
// $schema). A baseline that did less would flatter Pacer's ratio.
func TestBareSendsWhatPacerSends(t *testing.T) {
	run := func(impl string, c costCall) ([]string, map[string]any) {
		f := costFixture()
		defer f.Close()
		h := bareCost(f)
		if impl == "pacer" {
			h = pacerCost(t, f)
		}
		tok := costToken(t)
		c.do(t, h, tok) // warm (Pacer reads the event once)
		var r *awsfixture.Recording
		if c == participateCall {
			r = f.Record("DynamoDB.TransactWriteItems", "SQS.SendMessage")
		}
		f.Reset()
		rec := c.do(t, h, tok)
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
	pacerJSON, _ := json.Marshal(pacerAnswer)
	bareJSON, _ := json.Marshal(bareAnswer)
	if string(pacerJSON) != string(bareJSON) {
		t.Errorf("poll answers differ:\npacer %s\nbare  %s", pacerJSON, bareJSON)
	}
}
