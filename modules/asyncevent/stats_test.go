package asyncevent_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// An event's stats count its dead-letter candidates in the pass that
// counts its requests (the event index, the pending index and BatchGets,
// no Scan): the requests whose last recorded event is a retryable
// failure, queued or still RECEIVED, and one a worker recorded lost; not a
// decided one, nor a failed enqueue, nor a lottery entry collected after
// its first delivery failed.
func TestEventStatsCountDLQCandidates(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 10)
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lotto", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	delivery := func(eventID, user, id string, eventType asyncevent.EventType, receive int) asyncevent.Delivery {
		msg := asyncevent.Message{RequestID: id, EventID: eventID, UserID: user, EventType: eventType}
		return asyncevent.Delivery{Body: msg.Encode(), ReceiveCount: receive, SentAt: time.Now()}
	}
	// throttled delivers a message while every transaction is throttled:
	// the worker records a retryable failure.
	throttled := func(d asyncevent.Delivery) {
		t.Helper()
		env.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error { return asynceventtest.Throttle })
		defer env.Dynamo.SetTxFault(nil)
		if out := env.Worker.Process(ctx, d); out.Result != "retry" {
			t.Fatalf("throttled delivery: %+v, want retry", out)
		}
	}
	decided := participate(t, env.Ingest, "ev", "decided").RequestID
	if out := env.Worker.Process(ctx, delivery("ev", "decided", decided, asyncevent.FirstCome, 1)); out.Result != "succeeded" {
		t.Fatalf("decided: %+v", out)
	}
	retried := participate(t, env.Ingest, "ev", "retried").RequestID
	throttled(delivery("ev", "retried", retried, asyncevent.FirstCome, 2))
	lost := participate(t, env.Ingest, "ev", "lost").RequestID
	if out := env.Worker.Lost(ctx, delivery("ev", "lost", lost, asyncevent.FirstCome, 4)); out.Result != "lost" || out.Err != nil {
		t.Fatalf("lost: %+v", out)
	}
	env.Strand(t, "ev", "stranded") // RECEIVED, in the pending index only
	var strandedID string
	for r, err := range env.Store.PendingRequests(ctx, "ev") {
		if err != nil {
			t.Fatal(err)
		}
		if r.UserID == "stranded" {
			strandedID = r.RequestID
		}
	}
	throttled(delivery("ev", "stranded", strandedID, asyncevent.FirstCome, 1))
	failEnqueue(t, env, "ev", "failed-enqueue")

	entry := participate(t, env.Ingest, "lotto", "entry").RequestID
	throttled(delivery("lotto", "entry", entry, asyncevent.Lottery, 1))
	if st, err := env.Admin.EventStats(ctx, "lotto"); err != nil || st.DLQCandidates != 1 {
		t.Fatalf("lottery stats while its entry is retried: %+v %v, want 1 candidate", st, err)
	}
	if out := env.Worker.Process(ctx, delivery("lotto", "entry", entry, asyncevent.Lottery, 2)); out.Result != "collecting" {
		t.Fatalf("entry's redelivery: %+v", out)
	}

	env.Calls.Reset()
	st, err := env.Admin.EventStats(ctx, "ev")
	if err != nil || st.Total != 5 || st.DLQCandidates != 3 {
		t.Fatalf("stats %+v %v, want 5 requests, 3 candidates (retried, lost, stranded)", st, err)
	}
	if n := env.Calls.Count("DynamoDB.Scan"); n != 0 {
		t.Fatalf("stats scanned: %s", env.Calls)
	}
	if st, err := env.Admin.EventStats(ctx, "lotto"); err != nil || st.DLQCandidates != 0 {
		t.Fatalf("lottery stats once its entry is collected: %+v %v, want no candidate", st, err)
	}
}
