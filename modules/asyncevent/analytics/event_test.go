package analytics_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics/schematest"
	"github.com/pacerhq/pacer/sdk/eventsink"
)

const t0 = int64(1795680093000)

func base() asyncevent.Request {
	return asyncevent.Request{RequestID: "01REQ", EventID: "ev", UserID: "alice@example.com", EventType: asyncevent.FirstCome,
		Status: asyncevent.StatusReceived, RequestedAt: t0, IdempotencyKey: "IDEMP#ev#alice@example.com"}
}

func with(r asyncevent.Request, edit func(*asyncevent.Request)) *asyncevent.Request {
	edit(&r)
	return &r
}

// lifecycle is a request's changes from creation to SUCCEEDED, with one
// retryable failure on the way.
func lifecycle() [][2]*asyncevent.Request {
	created := base()
	queued := with(created, func(r *asyncevent.Request) { r.Status, r.QueuedAt = asyncevent.StatusQueued, t0+5 })
	started := with(*queued, func(r *asyncevent.Request) {
		r.Status, r.StartedAt, r.Attempts = asyncevent.StatusProcessing, t0+100, 1
	})
	retried := with(*started, func(r *asyncevent.Request) {
		r.Attempts, r.LastErrorCode, r.LastErrorAt = 2, "ThrottlingException", t0+150
	})
	done := with(*retried, func(r *asyncevent.Request) {
		r.Status, r.FinishedAt, r.UIResult, r.ResultCode = asyncevent.StatusSucceeded, t0+200, asyncevent.ResultSuccess, asyncevent.CodeSuccess
	})
	return [][2]*asyncevent.Request{{nil, &created}, {&created, queued}, {queued, started}, {started, retried}, {retried, done}}
}

func kinds(evs []eventsink.Envelope) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.DetailType)
	}
	return strings.Join(s, ",")
}

func TestEventsOfALifecycle(t *testing.T) {
	m := analytics.Mapper{MaxReceives: 2, UserKey: []byte("k")}
	var all []eventsink.Envelope
	want := []string{"ParticipationRequested", "", "", "RequestFailed", "ParticipationProcessed,DelayMeasured"}
	for i, ch := range lifecycle() {
		evs, err := m.Events(ch[0], ch[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(evs); got != want[i] {
			t.Errorf("change %d: events %q, want %q", i, got, want[i])
		}
		all = append(all, evs...)
	}
	schematest.Validate(t, all)

	var failed, delay analytics.Detail
	_ = json.Unmarshal(all[1].Detail, &failed)
	_ = json.Unmarshal(all[3].Detail, &delay)
	if failed.FailureClass != asyncevent.Retryable || failed.ErrorCode != "ThrottlingException" || !failed.DeadLettered || failed.Attempts != 2 {
		t.Errorf("retryable failure: %+v", failed)
	}
	if *delay.QueueDelayMs != 95 || *delay.E2EDelayMs != 195 || delay.QueuedAt != t0+5 {
		t.Errorf("delays: %+v", delay)
	}
	for _, ev := range all {
		if strings.Contains(string(ev.Detail), "alice") {
			t.Errorf("the user id leaked: %s", ev.Detail)
		}
	}
	if failed.UserHash == "" || len(failed.UserHash) != 64 {
		t.Errorf("userHash %q", failed.UserHash)
	}
}

// The same change seen twice gives the same ids; different transitions
// give different ids.
func TestIDsAreDeterministic(t *testing.T) {
	m := analytics.Mapper{}
	seen := map[string]string{}
	for _, ch := range lifecycle() {
		a, _ := m.Events(ch[0], ch[1])
		b, _ := m.Events(ch[0], ch[1])
		for i := range a {
			if a[i].ID != b[i].ID {
				t.Errorf("%s: id %s then %s", a[i].DetailType, a[i].ID, b[i].ID)
			}
			if prev, dup := seen[a[i].ID]; dup {
				t.Errorf("%s and %s share id %s", prev, a[i].DetailType, a[i].ID)
			}
			seen[a[i].ID] = a[i].DetailType
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d distinct events, want 4", len(seen))
	}
}

// An enqueue that failed at ingest: processed and failed, no delay (it
// never started).
func TestFailedEnqueue(t *testing.T) {
	created := base()
	failed := with(created, func(r *asyncevent.Request) {
		r.Status, r.FinishedAt, r.UIResult, r.ResultCode = asyncevent.StatusFailedFinal, t0+3, asyncevent.ResultFailed, asyncevent.CodeFailedIngestEnqueue
		r.FailureClass, r.ErrorCode = asyncevent.Retryable, "FAILED_INGEST_ENQUEUE"
	})
	evs, err := analytics.Mapper{}.Events(&created, failed)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(evs); got != "ParticipationProcessed,RequestFailed" {
		t.Fatalf("events %s", got)
	}
	schematest.Validate(t, evs)
}

// The validator is not a rubber stamp: a raw user id, an unknown event or
// a mismatched id are refused.
func TestSchemaRefusesBadEvents(t *testing.T) {
	evs, _ := analytics.Mapper{}.Events(nil, with(base(), func(*asyncevent.Request) {}))
	good, _ := json.Marshal(evs[0])
	for name, bad := range map[string]string{
		"userId":      strings.Replace(string(good), `"requestId"`, `"userId":"alice","requestId"`, 1),
		"detail-type": strings.Replace(string(good), `"detail-type":"ParticipationRequested"`, `"detail-type":"Other"`, 1),
		"id":          strings.Replace(string(good), `"version":"0","id":"`, `"version":"0","id":"x`, 1),
		"kind":        strings.Replace(string(good), `"detail-type":"ParticipationRequested"`, `"detail-type":"DelayMeasured"`, 1),
	} {
		if bad == string(good) {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if err := schematest.ValidateJSON([]byte(bad)); err == nil {
			t.Errorf("%s: accepted %s", name, bad)
		}
	}
	if err := schematest.ValidateJSON(good); err != nil {
		t.Errorf("good event refused: %v", err)
	}
}
