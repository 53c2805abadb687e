package asyncevent_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// A request whose enqueue failed is in its user's participations (GSI1,
// at its requestedAt) and in no other index but the pending one: not in
// the event's (GSI2), which the allocator, the lock jobs and the line
// read. Re-queued, it leaves GSI1 and comes back at its new queuedAt,
// even when a worker's transition, which keeps an existing queuedAt and
// its keys, records it first.
func TestFailedEnqueueIsInMyParticipations(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 10)
	p := failEnqueue(t, env, "ev", "u1")
	r := env.Request(t, p.RequestID)
	if !asyncevent.FailedEnqueue(r.Status, r.ResultCode) {
		t.Fatalf("request %+v, want a failed enqueue", r)
	}
	mine, err := env.Query.MyRequests(ctx, "u1", 20, "")
	if err != nil || len(mine.Requests) != 1 || mine.Requests[0].RequestID != p.RequestID || mine.Requests[0].Status != asyncevent.StatusFailedFinal {
		t.Fatalf("my participations %+v %v, want the failed request", mine.Requests, err)
	}
	item := rawItem(t, env, "REQ#"+p.RequestID, "META")
	if got, want := str(item, "GSI1SK"), "QAT#"+strconv.FormatInt(r.RequestedAt, 10)+"#REQ#"+p.RequestID; got != want || str(item, "GSI1PK") != "USER#u1" {
		t.Errorf("GSI1 %q / %q, want USER#u1 / %q", str(item, "GSI1PK"), got, want)
	}
	for _, a := range []string{"GSI2PK", "GSI2SK", "queuedAt"} {
		if item[a] != nil {
			t.Errorf("a failed enqueue has %s", a)
		}
	}
	if item["GSI3PK"] == nil {
		t.Error("a failed enqueue left the pending index")
	}

	// The operator's re-queue reopens it; the worker gets the message
	// before the re-queue records queuedAt, keeping any queuedAt keys it
	// finds.
	if err := env.Store.ReopenFailedEnqueue(ctx, asyncevent.Reopen{RequestID: p.RequestID, EventID: "ev", FinishedAt: r.FinishedAt, At: r.FinishedAt + 1}); err != nil {
		t.Fatal(err)
	}
	if mine, err := env.Query.MyRequests(ctx, "u1", 20, ""); err != nil || len(mine.Requests) != 0 {
		t.Fatalf("my participations while re-queued and RECEIVED: %+v %v, want none (listed once queued)", mine.Requests, err)
	}
	sent := time.Now().Add(time.Second)
	msg := asyncevent.Message{RequestID: p.RequestID, EventID: "ev", UserID: "u1", EventType: asyncevent.FirstCome}
	if out := env.Worker.Process(ctx, asyncevent.Delivery{Body: msg.Encode(), ReceiveCount: 1, SentAt: sent}); out.Result != "succeeded" {
		t.Fatalf("worker: %+v", out)
	}
	r = env.Request(t, p.RequestID)
	item = rawItem(t, env, "REQ#"+p.RequestID, "META")
	qat := "QAT#" + strconv.FormatInt(r.QueuedAt, 10) + "#REQ#" + p.RequestID
	if r.QueuedAt != sent.UnixMilli() || str(item, "GSI1SK") != qat || str(item, "GSI2SK") != qat {
		t.Fatalf("re-queued request: queuedAt %d, GSI1SK %q, GSI2SK %q; want %d and %q for both", r.QueuedAt, str(item, "GSI1SK"), str(item, "GSI2SK"), sent.UnixMilli(), qat)
	}
	if mine, err := env.Query.MyRequests(ctx, "u1", 20, ""); err != nil || len(mine.Requests) != 1 || mine.Requests[0].Status != asyncevent.StatusSucceeded {
		t.Fatalf("my participations once decided: %+v %v", mine.Requests, err)
	}
	checkLogs(t, env, r)
}
