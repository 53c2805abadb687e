package asyncevent_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// FIRST_COME: exactly N succeed, the rest are REJECTED_CAPACITY, the
// invariant holds, every log agrees with its request, and a message costs
// 2 DynamoDB writes, plus one for the worker's first rejection (with
// concurrency c, up to c messages may race into that first rejection).
func TestFirstComeWorker(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 3)
	var ids []string
	for i := range 10 {
		ids = append(ids, participate(t, env.Ingest, "ev", fmt.Sprintf("u%d", i)).RequestID)
	}
	env.Calls.Reset()
	env.Dynamo.Conflicts.Store(0)
	// A visibility timeout longer than the test: on a loaded machine the
	// batch can take more than a few seconds, and a redelivery (correctly
	// acked without a write, but after a failed conditional transaction)
	// would add a call that is not the per-message cost measured here.
	env.StartWorkers(t, 1, consumer.Config{Concurrency: 1, Visibility: 2 * time.Minute})
	rs := waitTerminal(t, env, ids, 30*time.Second)
	// DynamoDB Local occasionally cancels a transaction for a conflict even
	// with one writer (under load); ddb retries it. Those retries are not
	// the logic's writes.
	conflicts := env.Dynamo.Conflicts.Load()
	writes := env.Calls.Count("DynamoDB.TransactWriteItems") - int(conflicts)
	count := map[asyncevent.ResultCode]int{}
	for _, r := range rs {
		count[r.ResultCode]++
		checkLogs(t, env, r)
		if r.StartedAt == 0 || r.FinishedAt < r.StartedAt || r.QueueDelay() < 0 || r.Attempts != 1 {
			t.Errorf("request %+v", r)
		}
		switch r.ResultCode {
		case asyncevent.CodeSuccess:
			if r.Status != asyncevent.StatusSucceeded || r.UIResult != asyncevent.ResultSuccess {
				t.Errorf("winner %+v", r)
			}
		case asyncevent.CodeRejectedCapacity:
			if r.Status != asyncevent.StatusRejected || r.UIResult != asyncevent.ResultRejected {
				t.Errorf("loser %+v", r)
			}
		default:
			t.Errorf("result %s", r.ResultCode)
		}
	}
	if count[asyncevent.CodeSuccess] != 3 || count[asyncevent.CodeRejectedCapacity] != 7 {
		t.Fatalf("results %v, want 3 SUCCESS and 7 REJECTED_CAPACITY", count)
	}
	if writes != 2*len(ids)+1 {
		t.Fatalf("%d transactions (not counting %d conflict retries) for %d messages (%s)", writes, conflicts, len(ids), env.Calls)
	}
	st, err := env.Admin.EventStats(ctx, "ev")
	if err != nil || !st.InvariantOK || st.CapacityRemaining != 0 || st.ByStatus[asyncevent.StatusSucceeded] != 3 || st.Total != 10 {
		t.Fatalf("stats %+v %v", st, err)
	}
	asynceventtest.Eventually(t, 10*time.Second, "queue to drain", func() (bool, error) {
		n, err := env.Queue.Depth(ctx)
		return n == 0, err
	})
}

// Redeliveries are idempotent: a message for a finished request is acked
// without writing, and one for a PROCESSING request (the worker died after
// taking it) is finished.
func TestRedeliveryIsIdempotent(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 5)
	p := participate(t, env.Ingest, "ev", "u1")
	d := asyncevent.Delivery{Body: asyncevent.Message{RequestID: p.RequestID, EventID: "ev", UserID: "u1", EventType: asyncevent.FirstCome}.Encode(), ReceiveCount: 1, SentAt: time.Now()}
	if out := env.Worker.Process(ctx, d); !out.Ack || out.Result != "succeeded" {
		t.Fatalf("first delivery: %+v", out)
	}
	d.ReceiveCount = 2
	env.Calls.Reset()
	if out := env.Worker.Process(ctx, d); !out.Ack || out.Result != "done-already" {
		t.Fatalf("redelivery: %+v", out)
	}
	if env.Calls.Total() != 1 {
		t.Fatalf("redelivery made %s, want one failed transaction", env.Calls)
	}
	// A request left PROCESSING by a dead worker.
	q := participate(t, env.Ingest, "ev", "u2")
	err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: q.RequestID, EventID: "ev", UserID: "u2",
		From: []asyncevent.Status{asyncevent.StatusQueued}, To: asyncevent.StatusProcessing, At: time.Now().UnixMilli(), StartedAt: time.Now().UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	d2 := asyncevent.Delivery{Body: asyncevent.Message{RequestID: q.RequestID, EventID: "ev", UserID: "u2", EventType: asyncevent.FirstCome}.Encode(), ReceiveCount: 2, SentAt: time.Now()}
	if out := env.Worker.Process(ctx, d2); !out.Ack || out.Result != "succeeded" {
		t.Fatalf("delivery to PROCESSING request: %+v", out)
	}
	r := env.Request(t, q.RequestID)
	checkLogs(t, env, r)
	st, _ := env.Admin.EventStats(ctx, "ev")
	if !st.InvariantOK || st.CapacityRemaining != 3 {
		t.Fatalf("stats %+v", st)
	}
}

// Non-retryable failures: a malformed message is dropped, and a request
// for an unknown event becomes FAILED_FINAL with failure details; neither
// goes to the DLQ.
func TestNonRetryableFailures(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	now := time.Now().UnixMilli()
	r := &asyncevent.Request{RequestID: "orphan1", EventID: "ghost", UserID: "u1", EventType: asyncevent.FirstCome, Status: asyncevent.StatusReceived, RequestedAt: now}
	if _, _, err := env.Store.CreateRequest(ctx, r, 0); err != nil {
		t.Fatal(err)
	}
	if err := env.Queue.Send(ctx, asyncevent.Message{RequestID: "orphan1", EventID: "ghost", UserID: "u1", EventType: asyncevent.FirstCome}.Encode()); err != nil {
		t.Fatal(err)
	}
	if err := env.Queue.Send(ctx, "this is not json"); err != nil {
		t.Fatal(err)
	}
	env.StartWorkers(t, 1, consumer.Config{})
	got := waitTerminal(t, env, []string{"orphan1"}, 20*time.Second)[0]
	if got.Status != asyncevent.StatusFailedFinal || got.FailureClass != asyncevent.NonRetryable || got.ErrorCode != "UNKNOWN_EVENT" ||
		got.ErrorMessage == "" || got.UIResult != asyncevent.ResultFailed || got.FinishedAt == 0 {
		t.Fatalf("request %+v", got)
	}
	checkLogs(t, env, got)
	asynceventtest.Eventually(t, 10*time.Second, "both messages deleted", func() (bool, error) {
		main, dead, err := env.Queue.Depths(ctx)
		return main == 0 && dead == 0, err
	})
}

// A message that does not decode but still names a request waiting for it
// (a bad event type) ends that request FAILED_FINAL / FAILED_SERDE instead
// of leaving it QUEUED forever, and is acked; one that names no request,
// or a request another message already took, is dropped and changes
// nothing; one of a newer version is left for a newer worker (not acked,
// its request untouched).
func TestUndecodableMessageFailsItsRequest(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 5)
	p := participate(t, env.Ingest, "ev", "u1")
	newer := participate(t, env.Ingest, "ev", "u3")
	taken := participate(t, env.Ingest, "ev", "u2")
	if err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: taken.RequestID, EventID: "ev", UserID: "u2",
		From: []asyncevent.Status{asyncevent.StatusQueued}, To: asyncevent.StatusProcessing, At: time.Now().UnixMilli() + 1,
		StartedAt: time.Now().UnixMilli() + 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		body   string
		ack    bool
		result string
	}{
		{`{"v":1,"requestId":"` + p.RequestID + `","eventId":"ev","userId":"u1","eventType":"BINGO"}`, true, "failed"},
		{`{"v":2,"requestId":"` + newer.RequestID + `","eventId":"ev","userId":"u3","eventType":"FIRST_COME"}`, false, "retry"},
		{`{"v":1,"requestId":"` + taken.RequestID + `","eventId":"ev","userId":"u2","eventType":"BINGO"}`, true, "bad-message"},
		{`{"v":1,"requestId":"nosuchrequest","eventType":"BINGO"}`, true, "bad-message"},
		{`not json`, true, "bad-message"},
	} {
		out := env.Worker.Process(ctx, asyncevent.Delivery{Body: c.body, ReceiveCount: 1, SentAt: time.Now()})
		if out.Ack != c.ack || out.Result != c.result || !errors.Is(out.Err, asyncevent.ErrBadMessage) {
			t.Errorf("%s: outcome %+v, want ack=%t %q with ErrBadMessage", c.body, out, c.ack, c.result)
		}
		if c.result == "bad-message" && out.Status != "" {
			t.Errorf("%s: a dropped message reports the status %s (metrics would count it as its outcome)", c.body, out.Status)
		}
	}
	r := env.Request(t, p.RequestID)
	if r.Status != asyncevent.StatusFailedFinal || r.ResultCode != asyncevent.CodeFailedSerde || r.FailureClass != asyncevent.NonRetryable ||
		r.ErrorCode != "BAD_MESSAGE" || !strings.Contains(r.ErrorMessage, "event type") || r.UIResult != asyncevent.ResultFailed || r.FinishedAt == 0 {
		t.Fatalf("request %+v, want FAILED_FINAL / FAILED_SERDE", r)
	}
	checkLogs(t, env, r)
	for id, want := range map[string]asyncevent.Status{taken.RequestID: asyncevent.StatusProcessing, newer.RequestID: asyncevent.StatusQueued} {
		if r := env.Request(t, id); r.Status != want {
			t.Errorf("request %s is %s, want %s still", id, r.Status, want)
		}
	}
}

// A retryable fault (throttling) leaves the message; the attempt and the
// error are recorded; once the fault clears the request completes.
func TestRetryableFault(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{MaxReceives: 5})
	firstCome(t, env, "ev", 5)
	p := participate(t, env.Ingest, "ev", "u1")
	var fail atomic.Bool
	fail.Store(true)
	env.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error {
		if fail.Load() {
			return asynceventtest.Throttle
		}
		return nil
	})
	// One delivery per receive: with a visibility not above the long-poll
	// wait, local-aws-sqs hands out receives 1 and 2 in one batch, and the
	// first could still be on its way to DynamoDB when the fault clears
	// below, then succeed as attempt 1 (see StartWorkers).
	env.StartWorkers(t, 1, consumer.Config{Visibility: 3 * time.Second})
	asynceventtest.Eventually(t, 20*time.Second, "two failed attempts recorded", func() (bool, error) {
		r := env.Request(t, p.RequestID)
		return r.Attempts >= 2 && r.LastErrorCode == "ThrottlingException" && strings.Contains(r.LastErrorMessage, "injected"), nil
	})
	fail.Store(false)
	r := waitTerminal(t, env, []string{p.RequestID}, 20*time.Second)[0]
	if r.Status != asyncevent.StatusSucceeded || r.Attempts < 3 {
		t.Fatalf("request %+v", r)
	}
	if _, dead, _ := env.Queue.Depths(ctx); dead != 0 {
		t.Fatalf("DLQ holds %d", dead)
	}
}

// A persistent failure sends the message to the DLQ after maxReceiveCount
// receives; after the fault clears, a redrive moves it back and the
// request completes.
func TestDLQAndRedrive(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{MaxReceives: 3})
	firstCome(t, env, "ev", 5)
	var ids []string
	for i := range 3 {
		ids = append(ids, participate(t, env.Ingest, "ev", fmt.Sprintf("u%d", i)).RequestID)
	}
	var fail atomic.Bool
	fail.Store(true)
	env.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error {
		if fail.Load() {
			return asynceventtest.Throttle
		}
		return nil
	})
	// Receives well apart (see StartWorkers): two deliveries of one message
	// in one batch would record their attempts concurrently, and the
	// attempt count is the last write, not the highest.
	env.StartWorkers(t, 1, consumer.Config{Visibility: 3 * time.Second})
	asynceventtest.Eventually(t, 30*time.Second, "3 messages in the DLQ", func() (bool, error) {
		_, dead, err := env.Queue.Depths(ctx)
		return dead == 3, err
	})
	// Each receive's failure is recorded, and the last record wins
	// (WorkerStore.RecordAttempt: a redrive starts the count again). SQS moves
	// the message on its own clock, so wait for the records; and on a
	// loaded machine a delivery can outlast the 3 s visibility, so the
	// next receive runs beside it and the lower count may land last (seen
	// in CI: 2 after three receives). What holds: a throttling failure
	// recorded on each, at attempt 3 at most, with the request still QUEUED.
	asynceventtest.Eventually(t, 10*time.Second, "a failure recorded on each", func() (bool, error) {
		for _, id := range ids {
			if r := env.Request(t, id); r.Attempts < 1 || r.LastErrorCode != "ThrottlingException" {
				return false, fmt.Errorf("%s has %d attempts, last error %q", id, r.Attempts, r.LastErrorCode)
			}
		}
		return true, nil
	})
	for _, id := range ids {
		if r := env.Request(t, id); r.Status != asyncevent.StatusQueued || r.Attempts > 3 || r.LastErrorCode != "ThrottlingException" {
			t.Fatalf("request in DLQ: %+v", r)
		}
	}
	view, err := env.Admin.DeadLetters(ctx, 10)
	if err != nil || view.DeadDepth != 3 || len(view.Messages) != 3 || view.Messages[0].Message == nil {
		t.Fatalf("DLQ view %+v %v", view, err)
	}
	fail.Store(false)
	if _, err := env.Admin.Redrive(ctx); err != nil {
		t.Fatal(err)
	}
	rs := waitTerminal(t, env, ids, 30*time.Second)
	for _, r := range rs {
		if r.Status != asyncevent.StatusSucceeded {
			t.Fatalf("after redrive: %+v", r)
		}
		checkLogs(t, env, r)
	}
	asynceventtest.Eventually(t, 10*time.Second, "queues empty", func() (bool, error) {
		main, dead, err := env.Queue.Depths(ctx)
		return main == 0 && dead == 0, err
	})
}

// With the worker stopped the API keeps accepting and the queue grows;
// restarted, the worker drains it (the QueueStalled alarm's case,
// docs/runbooks/QueueStalled.md).
func TestWorkerStoppedQueueGrowsThenDrains(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 100)
	var ids []string
	for i := range 30 {
		ids = append(ids, participate(t, env.Ingest, "ev", fmt.Sprintf("u%d", i)).RequestID)
		if i == 9 || i == 29 {
			if n, err := env.Queue.Depth(ctx); err != nil || n != i+1 {
				// Say which request has no message, and why.
				var odd []string
				for _, id := range ids {
					if r := env.Request(t, id); r.Status != asyncevent.StatusQueued {
						odd = append(odd, fmt.Sprintf("%s %s %s %q", id, r.Status, r.ErrorCode, r.ErrorMessage))
					}
				}
				t.Fatalf("queue depth %d (%v), want %d; requests not QUEUED: %v", n, err, i+1, odd)
			}
		}
	}
	for _, id := range ids {
		if r := env.Request(t, id); r.Status != asyncevent.StatusQueued {
			t.Fatalf("%+v", r)
		}
	}
	env.StartWorkers(t, 2, consumer.Config{})
	waitTerminal(t, env, ids, 30*time.Second)
	asynceventtest.Eventually(t, 10*time.Second, "queue drained", func() (bool, error) {
		n, err := env.Queue.Depth(ctx)
		return n == 0, err
	})
}

// 500 distinct users at once, capacity 100, 3 workers: exactly 100
// SUCCEEDED and 400 REJECTED_CAPACITY, nothing left, and GSI2 lists all 500
// in queuedAt order.
func TestFirstCome500(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "spike", 100)
	env.StartWorkers(t, 3, consumer.Config{Concurrency: 10})
	ids := make([]string, 500)
	errs := make([]error, 500)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range ids {
		wg.Go(func() {
			<-start
			p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "spike", UserID: fmt.Sprintf("user%03d", i)})
			ids[i], errs[i] = p.RequestID, err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("participant %d: %v", i, err)
		}
	}
	rs := waitTerminal(t, env, ids, 120*time.Second)
	count := map[asyncevent.ResultCode]int{}
	for _, r := range rs {
		count[r.ResultCode]++
	}
	if count[asyncevent.CodeSuccess] != 100 || count[asyncevent.CodeRejectedCapacity] != 400 {
		t.Fatalf("results %v, want 100 SUCCESS + 400 REJECTED_CAPACITY", count)
	}
	st, err := env.Admin.EventStats(ctx, "spike")
	if err != nil || !st.InvariantOK || st.CapacityRemaining != 0 || st.Total != 500 {
		t.Fatalf("stats %+v %v", st, err)
	}
	var prev string
	n := 0
	for r, err := range env.Store.AllEventRequests(ctx, "spike") {
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%013d#%s", r.QueuedAt, r.RequestID)
		if key < prev {
			t.Fatalf("GSI2 out of queuedAt order at %d: %s after %s", n, key, prev)
		}
		prev = key
		n++
	}
	if n != 500 {
		t.Fatalf("GSI2 lists %d requests, want 500", n)
	}
}

// A worker that takes a message while ingest is still moving the request
// RECEIVED → QUEUED follows the status (QUEUED, RECEIVED, QUEUED again) and
// records PROCESSING after QUEUED, in the request and in its log, even
// though its clock reading predates ingest's.
func TestWorkerFollowsAStatusThatMovesUnderIt(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	now := createReceived(t, env, "race1")
	var calls atomic.Int64
	var inHook atomic.Bool
	env.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error {
		// The worker's second try (from RECEIVED): ingest's QUEUED update
		// lands just before it, 50 ms later by the clock.
		if calls.Add(1) == 2 && inHook.CompareAndSwap(false, true) {
			if err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: "race1", EventID: "ev", UserID: "u1",
				From: []asyncevent.Status{asyncevent.StatusReceived}, To: asyncevent.StatusQueued, At: now + 50, QueuedAt: now + 50}); err != nil {
				t.Errorf("ingest's update: %v", err)
			}
		}
		return nil
	})
	err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: "race1", EventID: "ev", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusQueued, asyncevent.StatusReceived}, To: asyncevent.StatusProcessing,
		At: now + 10, StartedAt: now + 10, QueuedAt: now + 10, KeepQueuedAt: true})
	if err != nil {
		t.Fatalf("worker's transition: %v", err)
	}
	got := env.Request(t, "race1")
	if got.Status != asyncevent.StatusProcessing || got.QueuedAt != now+50 || got.StartedAt <= got.QueuedAt {
		t.Fatalf("request %+v: want PROCESSING, queuedAt %d, startedAt after it", got, now+50)
	}
	checkLogs(t, env, got)
}

// A worker whose clock reading predates ingest's QUEUED update, but whose
// write lands after it (so its first try, from QUEUED, finds the status it
// expects), still records PROCESSING after QUEUED: times on a request only
// move forward, whichever process's clock took them.
func TestWorkerTransitionIsTimedAfterWhatItFollows(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	now := createReceived(t, env, "race2")
	if err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: "race2", EventID: "ev", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusReceived}, To: asyncevent.StatusQueued, At: now + 50, QueuedAt: now + 50}); err != nil {
		t.Fatalf("ingest's update: %v", err)
	}
	env.Calls.Reset()
	err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: "race2", EventID: "ev", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusQueued, asyncevent.StatusReceived}, To: asyncevent.StatusProcessing,
		At: now + 10, StartedAt: now + 10, QueuedAt: now + 10, KeepQueuedAt: true})
	if err != nil {
		t.Fatalf("worker's transition: %v", err)
	}
	if n := env.Calls.Count("DynamoDB.TransactWriteItems"); n != 2 {
		t.Fatalf("%d TransactWriteItems, want 2 (the refused early-timed try, then the retimed one)", n)
	}
	got := env.Request(t, "race2")
	if got.Status != asyncevent.StatusProcessing || got.QueuedAt != now+50 || got.StartedAt != now+51 {
		t.Fatalf("request %+v: want PROCESSING, queuedAt %d, startedAt %d", got, now+50, now+51)
	}
	checkLogs(t, env, got)
	// A transition timed after everything recorded goes through in one write.
	env.Calls.Reset()
	if err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: "race2", EventID: "ev", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusProcessing}, To: asyncevent.StatusSucceeded, At: now + 100, FinishedAt: now + 100,
		UIResult: asyncevent.ResultSuccess, ResultCode: asyncevent.CodeSuccess}); err != nil {
		t.Fatal(err)
	}
	if n := env.Calls.Count("DynamoDB.TransactWriteItems"); n != 1 {
		t.Fatalf("%d TransactWriteItems, want 1", n)
	}
	checkLogs(t, env, env.Request(t, "race2"))
}

// An operator's re-queue counts as a change: a worker whose clock reading
// predates it still records PROCESSING after the re-queue's log.
func TestTransitionIsTimedAfterARequeue(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 5)
	env.SQS.SetSendFault(asynceventtest.Throttle)
	failed := participate(t, env.Ingest, "ev", "u1") // FAILED_INGEST_ENQUEUE
	env.SQS.SetSendFault(nil)
	r := env.Request(t, failed.RequestID)
	if r.ResultCode != asyncevent.CodeFailedIngestEnqueue {
		t.Fatalf("request %+v, want FAILED_INGEST_ENQUEUE", r)
	}
	later := r.FinishedAt + 1000
	if err := env.Store.ReopenFailedEnqueue(ctx, asyncevent.Reopen{RequestID: r.RequestID, FinishedAt: r.FinishedAt, At: later}); err != nil {
		t.Fatal(err)
	}
	err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: r.RequestID, EventID: "ev", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusQueued, asyncevent.StatusReceived}, To: asyncevent.StatusProcessing,
		At: later - 500, StartedAt: later - 500, QueuedAt: later - 500, KeepQueuedAt: true})
	if err != nil {
		t.Fatal(err)
	}
	got := env.Request(t, r.RequestID)
	if got.Status != asyncevent.StatusProcessing || got.StartedAt != later+1 {
		t.Fatalf("request %+v: want PROCESSING, startedAt %d", got, later+1)
	}
	checkLogs(t, env, got)
}

// createReceived writes a RECEIVED first-come request id of user u1 in
// event ev, as ingest's first transaction does, and returns its
// requestedAt.
func createReceived(t *testing.T, env *asynceventtest.Env, id string) int64 {
	t.Helper()
	now := time.Now().UnixMilli()
	r := &asyncevent.Request{RequestID: id, EventID: "ev", UserID: "u1", EventType: asyncevent.FirstCome,
		Status: asyncevent.StatusReceived, UIResult: asyncevent.ResultPending, RequestedAt: now}
	if _, _, err := env.Store.CreateRequest(ctx, r, 0); err != nil {
		t.Fatal(err)
	}
	return now
}

// Process reports what metrics observe: the request's status after the
// delivery, its queuedAt as known, and finishedAt exactly as written, only
// from the delivery that wrote it.
func TestOutcomeReportsStatusAndTimes(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 1)
	sent := time.Now().Add(-time.Second)
	deliver := func(user string, receives int) (asyncevent.Outcome, *asyncevent.Request) {
		p := participate(t, env.Ingest, "ev", user)
		d := asyncevent.Delivery{Body: asyncevent.Message{RequestID: p.RequestID, EventID: "ev", UserID: user, EventType: asyncevent.FirstCome}.Encode(), ReceiveCount: receives, SentAt: sent}
		return env.Worker.Process(ctx, d), env.Request(t, p.RequestID)
	}
	for _, c := range []struct {
		user   string
		status asyncevent.Status
	}{{"u1", asyncevent.StatusSucceeded}, {"u2", asyncevent.StatusRejected}} {
		out, r := deliver(c.user, 1)
		if out.Status != c.status || out.EventType != asyncevent.FirstCome || out.QueuedAt != sent.UnixMilli() ||
			out.FinishedAt == 0 || out.FinishedAt != r.FinishedAt {
			t.Fatalf("%s: outcome %+v for request %+v", c.user, out, r)
		}
	}
	// A redelivery reports the terminal status and the stored queuedAt,
	// but no finish: the first delivery made the request terminal.
	r := env.Request(t, participate(t, env.Ingest, "ev", "u1").RequestID)
	d := asyncevent.Delivery{Body: asyncevent.Message{RequestID: r.RequestID, EventID: "ev", UserID: "u1", EventType: asyncevent.FirstCome}.Encode(), ReceiveCount: 2, SentAt: time.Now()}
	out := env.Worker.Process(ctx, d)
	if out.Result != "done-already" || out.Status != asyncevent.StatusSucceeded || out.QueuedAt != r.QueuedAt || out.FinishedAt != 0 {
		t.Fatalf("redelivery: outcome %+v for request %+v", out, r)
	}
}

type participations struct {
	mu  sync.Mutex
	got []string
}

func (o *participations) Participated(p asyncevent.Participation, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err != nil:
		o.got = append(o.got, "refused: "+err.Error())
	case p.IsDuplicate:
		o.got = append(o.got, "duplicate")
	default:
		o.got = append(o.got, "new")
	}
}

// The Observer hears every answer of Participate.
func TestObserverHearsParticipations(t *testing.T) {
	t.Parallel()
	obs := &participations{}
	env := asynceventtest.New(t, asynceventtest.Options{Ingest: asyncevent.IngestConfig{Observer: obs}})
	firstCome(t, env, "ev", 1)
	participate(t, env.Ingest, "ev", "u1")
	participate(t, env.Ingest, "ev", "u1")
	if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "nope", UserID: "u1"}); err == nil {
		t.Fatal("participation in a missing event accepted")
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.got) != 3 || obs.got[0] != "new" || obs.got[1] != "duplicate" || !strings.HasPrefix(obs.got[2], "refused: ") {
		t.Fatalf("observed %q", obs.got)
	}
}
