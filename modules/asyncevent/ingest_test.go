package asyncevent_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// A new participation costs exactly 3 AWS calls (once the event config is
// cached) and a duplicate 1; the items are as dynamostore's package doc
// lays them out.
func TestParticipateCallsAndItems(t *testing.T) {
	t.Parallel()
	// A long cache TTL: under parallel tests the warm-up may take longer
	// than the default 2 s.
	env := asynceventtest.New(t, asynceventtest.Options{EventCacheTTL: time.Minute})
	cfg := firstCome(t, env, "ev1", 10)
	participate(t, env.Ingest, "ev1", "warm-up") // loads the EventConfig into the cache

	env.Calls.Reset()
	before := time.Now().UnixMilli()
	p := participate(t, env.Ingest, "ev1", "u1")
	if got := env.Calls.Total(); got != 3 || env.Calls.Count("DynamoDB.TransactWriteItems") != 2 || env.Calls.Count("SQS.SendMessage") != 1 {
		t.Fatalf("new participation made %d calls (%s), want 3: TransactWriteItems×2 + SendMessage", got, env.Calls)
	}
	if p.IsDuplicate || !asyncevent.ValidID(p.RequestID) {
		t.Fatalf("participation %+v", p)
	}
	env.Calls.Reset()
	d := participate(t, env.Ingest, "ev1", "u1")
	if got := env.Calls.Total(); got != 1 || env.Calls.Count("DynamoDB.TransactWriteItems") != 1 {
		t.Fatalf("duplicate made %d calls (%s), want 1 TransactWriteItems", got, env.Calls)
	}
	if !d.IsDuplicate || d.RequestID != p.RequestID {
		t.Fatalf("duplicate %+v, want requestId %s", d, p.RequestID)
	}

	r := env.Request(t, p.RequestID)
	if r.Status != asyncevent.StatusQueued || r.QueuedAt < before || r.RequestedAt < before || r.UIResult != asyncevent.ResultPending ||
		r.IdempotencyKey != "IDEMP#ev1#u1" || r.EventType != asyncevent.FirstCome || r.UserID != "u1" {
		t.Fatalf("request %+v", r)
	}
	item := rawItem(t, env, "REQ#"+p.RequestID, "META")
	qat := "QAT#" + strconv.FormatInt(r.QueuedAt, 10) + "#REQ#" + p.RequestID
	for a, want := range map[string]string{"GSI1PK": "USER#u1", "GSI1SK": qat, "GSI2PK": "EVENT#ev1", "GSI2SK": qat, "entityType": "REQUEST"} {
		if got := str(item, a); got != want {
			t.Errorf("request %s = %q, want %q", a, got, want)
		}
	}
	if ttl, want := num(item, "ttl"), strconv.FormatInt((cfg.ClosesAt+asyncevent.RequestTTL.Milliseconds())/1000, 10); ttl != want {
		t.Errorf("request ttl %s, want %s (event end + 90 d: the event ends after the request)", ttl, want)
	}
	lock := rawItem(t, env, "IDEMP#ev1#u1", "LOCK")
	if str(lock, "requestId") != p.RequestID || str(lock, "entityType") != "IDEMPOTENCY" || lock["GSI1PK"] != nil {
		t.Errorf("lock %v", lock)
	}
	if ttl, want := num(lock, "ttl"), strconv.FormatInt((cfg.ClosesAt+asyncevent.LockTTLAfter.Milliseconds())/1000, 10); ttl != want {
		t.Errorf("lock ttl %s, want %s (event end + 7 d)", ttl, want)
	}
	logs, err := env.Store.Logs(ctx, p.RequestID)
	if err != nil || len(logs) != 2 || logs[0].ToStatus != asyncevent.StatusReceived || logs[1].FromStatus != asyncevent.StatusReceived ||
		logs[1].ToStatus != asyncevent.StatusQueued || logs[1].OccurredAt != r.QueuedAt {
		t.Fatalf("logs %+v %v", logs, err)
	}
	logItem := rawItem(t, env, "REQ#"+p.RequestID, "LOG#"+strconv.FormatInt(r.QueuedAt, 10)+"#QUEUED")
	if ttl, want := num(logItem, "ttl"), strconv.FormatInt((cfg.ClosesAt+asyncevent.LogTTL.Milliseconds())/1000, 10); ttl != want || logItem["GSI2PK"] != nil {
		t.Errorf("log ttl %s, want %s (event end + 30 d); item %v", ttl, want, logItem)
	}
	if n, err := env.Queue.Depth(ctx); err != nil || n != 2 {
		t.Fatalf("queue depth %d %v, want 2", n, err)
	}
	mine, err := env.Query.MyRequests(ctx, "u1", 20, "")
	if err != nil || len(mine.Requests) != 1 || mine.Requests[0].RequestID != p.RequestID {
		t.Fatalf("my requests %+v %v", mine, err)
	}
}

// 50 concurrent clicks from one user: one requestId, one Request item, one
// message.
func TestDuplicateClicks(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 10)
	results, errs := participateAtOnce(env.Ingest, asyncevent.ParticipateInput{EventID: "ev", UserID: "clicker"}, 50)
	ids := map[string]int{}
	dups := 0
	for i, p := range results {
		if errs[i] != nil {
			t.Fatalf("click %d: %v", i, errs[i])
		}
		ids[p.RequestID]++
		if p.IsDuplicate {
			dups++
		}
	}
	if len(ids) != 1 || dups != 49 {
		t.Fatalf("%d distinct requestIds, %d duplicates; want 1 and 49", len(ids), dups)
	}
	if n := countItems(t, env, "REQUEST"); n != 1 {
		t.Fatalf("%d Request items, want 1", n)
	}
	if n, err := env.Queue.Depth(ctx); err != nil || n != 1 {
		t.Fatalf("queue depth %d %v, want 1 message", n, err)
	}
}

// Unknown, not-yet-open and closed events are refused before anything is
// written.
func TestParticipateRefusesClosedEvents(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	now := time.Now()
	mk := func(in asyncevent.NewEvent) {
		if _, err := env.Admin.CreateEvent(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	mk(asyncevent.NewEvent{EventID: "later", EventType: asyncevent.FirstCome, Capacity: 1, OpensAt: now.Add(time.Hour).UnixMilli()})
	mk(asyncevent.NewEvent{EventID: "lot", EventType: asyncevent.Lottery, Winners: 1, LotteryCutoffAt: now.Add(time.Hour).UnixMilli()})
	mk(asyncevent.NewEvent{EventID: "fc", EventType: asyncevent.FirstCome, Capacity: 1, ClosesAt: now.Add(time.Hour).UnixMilli()})
	future := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue,
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
	env.Calls.Reset()
	for _, c := range []struct {
		ingest  *asyncevent.Ingest
		eventID string
		want    error
	}{
		{env.Ingest, "nope", asyncevent.ErrEventNotFound},
		{env.Ingest, "later", asyncevent.ErrEventNotOpen},
		{future, "lot", asyncevent.ErrLotteryClosed},
		{future, "fc", asyncevent.ErrEventClosed},
		{env.Ingest, "bad#id", asyncevent.ErrInvalidID},
	} {
		if _, err := c.ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: c.eventID, UserID: "u1"}); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.eventID, err, c.want)
		}
	}
	if n := env.Calls.Count("DynamoDB.TransactWriteItems") + env.Calls.Count("SQS"); n != 0 {
		t.Fatalf("refused participations wrote: %s", env.Calls)
	}
}

// If the enqueue fails the request is FAILED_FINAL / FAILED_INGEST_ENQUEUE,
// its id is still returned, and the lock is kept.
func TestEnqueueFailure(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 10)
	p := failEnqueue(t, env, "ev", "u1")
	r := env.Request(t, p.RequestID)
	if r.Status != asyncevent.StatusFailedFinal || r.ResultCode != asyncevent.CodeFailedIngestEnqueue || r.ErrorCode != "FAILED_INGEST_ENQUEUE" ||
		r.UIResult != asyncevent.ResultFailed || r.FinishedAt == 0 || r.ErrorMessage == "" || len(r.ErrorMessage) > asyncevent.MaxErrorMessage {
		t.Fatalf("request %+v", r)
	}
	// The seed's failure class, as stored (docs/contract.md: not the
	// REQUEUEABLE Pacer once wrote, which the store reads as RETRYABLE).
	if fc := str(rawItem(t, env, "REQ#"+p.RequestID, "META"), "failureClass"); fc != string(asyncevent.Retryable) {
		t.Fatalf("stored failureClass %q, want RETRYABLE", fc)
	}
	checkLogs(t, env, r)
	again := participate(t, env.Ingest, "ev", "u1")
	if !again.IsDuplicate || again.RequestID != p.RequestID {
		t.Fatalf("after enqueue failure: %+v, want the kept lock's id", again)
	}
	if n, _ := env.Queue.Depth(ctx); n != 0 {
		t.Fatalf("queue depth %d", n)
	}
}

// An operator re-queues a request whose enqueue failed: while SQS still
// fails it is FAILED_FINAL again; once SQS is back, of 20 concurrent
// re-queues exactly one goes through, the request is QUEUED with a queuedAt
// after those queued before it, and a worker finishes it. The log shows
// every step. The sweep counts such requests and, when asked, re-queues
// them.
func TestRequeueFailedEnqueue(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 1)
	first := participate(t, env.Ingest, "ev", "u0")
	env.SQS.SetSendFault(asynceventtest.Throttle)
	p := participate(t, env.Ingest, "ev", "u1")
	other := participate(t, env.Ingest, "ev", "u2")

	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{}); err != nil || res != (asyncevent.SweepResult{FailedEnqueue: 2}) {
		t.Fatalf("sweep: %+v %v, want 2 failed enqueues counted", res, err)
	}
	firstFailure := env.Request(t, p.RequestID).FinishedAt
	r, err := env.Operations.RequeueFailed(ctx, p.RequestID)
	if err != nil || r.Status != asyncevent.StatusFailedFinal || r.ResultCode != asyncevent.CodeFailedIngestEnqueue || r.FinishedAt <= firstFailure {
		t.Fatalf("re-queue while SQS fails: %+v %v, want FAILED_FINAL again, later", r, err)
	}
	// A caller that read the first failure is too late: it must not
	// re-queue the second one.
	var se *asyncevent.StateError
	if err := env.Store.ReopenFailedEnqueue(ctx, asyncevent.Reopen{RequestID: p.RequestID, FinishedAt: firstFailure, At: r.FinishedAt + 1}); !errors.As(err, &se) {
		t.Fatalf("stale reopen: %v, want a StateError", err)
	}
	// The sweep, asked to re-queue while SQS still fails, stops at the
	// first failed re-send and does not count it as re-queued.
	env.Calls.Reset()
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{RequeueFailedEnqueue: true}); err != nil || res != (asyncevent.SweepResult{FailedEnqueue: 2}) {
		t.Fatalf("sweep while SQS fails: %+v %v", res, err)
	}
	if n := env.Calls.Count("DynamoDB.TransactWriteItems"); n != 2 { // one reopen, one mark-failed
		t.Fatalf("sweep while SQS fails: %s, want one re-send attempt (2 transactions), then stop", env.Calls)
	}
	failures := 2 // ingest's and the first re-queue's; the sweep may have tried p again
	if env.Request(t, p.RequestID).FinishedAt > r.FinishedAt {
		failures++
	}
	env.SQS.SetSendFault(nil)

	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := env.Operations.RequeueFailed(ctx, p.RequestID)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, asyncevent.ErrNotRequeueable):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 19 {
		t.Fatalf("concurrent re-queues: %d went through, %d refused; want 1 and 19", ok.Load(), refused.Load())
	}
	r = env.Request(t, p.RequestID)
	q0 := env.Request(t, first.RequestID)
	if r.Status != asyncevent.StatusQueued || r.QueuedAt <= q0.QueuedAt || r.FinishedAt != 0 || r.ErrorCode != "" || r.ResultCode != "" ||
		r.UIResult != asyncevent.ResultPending {
		t.Fatalf("re-queued request %+v", r)
	}
	if n, _ := env.Queue.Depth(ctx); n != 2 {
		t.Fatalf("queue depth %d, want 2 (u0 and the re-queued u1)", n)
	}
	for id, want := range map[string]error{first.RequestID: asyncevent.ErrNotRequeueable, "01M8ANM06JJ2G6K2AP2SMAK93R": asyncevent.ErrRequestNotFound, "bad#id": asyncevent.ErrInvalidID} {
		if _, err := env.Operations.RequeueFailed(ctx, id); !errors.Is(err, want) {
			t.Errorf("re-queue %s: %v, want %v", id, err, want)
		}
	}
	if again := participate(t, env.Ingest, "ev", "u1"); !again.IsDuplicate || again.RequestID != p.RequestID {
		t.Fatalf("u1 again: %+v, want the kept lock's id", again)
	}

	env.StartWorkers(t, 2, consumer.Config{})
	rs := waitTerminal(t, env, []string{first.RequestID, p.RequestID}, 30*time.Second)
	// One seat: one of them takes it (workers take messages in the order
	// SQS delivers them, which a standard queue does not promise).
	codes := map[asyncevent.ResultCode]int{rs[0].ResultCode: 1}
	codes[rs[1].ResultCode]++
	if codes[asyncevent.CodeSuccess] != 1 || codes[asyncevent.CodeRejectedCapacity] != 1 {
		t.Fatalf("u0 %s/%s, u1 %s/%s: want one seat taken and one refused", rs[0].Status, rs[0].ResultCode, rs[1].Status, rs[1].ResultCode)
	}
	checkLogs(t, env, rs[1])
	logs, err := env.Store.Logs(ctx, p.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, l := range logs {
		steps = append(steps, string(l.ToStatus))
	}
	if got, want := strings.Join(steps, " "), "RECEIVED "+strings.Repeat("FAILED_FINAL RECEIVED ", failures)+"QUEUED PROCESSING "+string(rs[1].Status); got != want {
		t.Fatalf("log %s\nwant %s", got, want)
	}

	// The sweep re-queues the other failed request when asked to.
	res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{RequeueFailedEnqueue: true})
	if err != nil || res != (asyncevent.SweepResult{FailedEnqueue: 1, FailedEnqueueRequeued: 1}) {
		t.Fatalf("sweep with re-queue: %+v %v", res, err)
	}
	if rs := waitTerminal(t, env, []string{other.RequestID}, 30*time.Second); rs[0].ResultCode != asyncevent.CodeRejectedCapacity {
		t.Fatalf("u2 after the sweep: %s/%s", rs[0].Status, rs[0].ResultCode)
	}
}

// Ingest dying after the send and before RECEIVED → QUEUED (here, its
// write failing): the worker still completes the request, taking queuedAt
// from the message, and the service counts the write whose outcome it does
// not know.
func TestIngestDiesAfterSend(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 1)
	var n int
	var mu sync.Mutex
	env.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 2 { // the QUEUED transition
			return asynceventtest.Throttle
		}
		return nil
	})
	p := participate(t, env.Ingest, "ev", "u1")
	env.Dynamo.SetTxFault(nil)
	if r := env.Request(t, p.RequestID); r.Status != asyncevent.StatusReceived || r.QueuedAt != 0 {
		t.Fatalf("after the simulated crash: %+v", r)
	}
	if n := env.Ingest.QueuedAtUnsure(); n != 1 {
		t.Fatalf("QueuedAtUnsure %d, want 1: the failed QUEUED write may still land", n)
	}
	env.StartWorkers(t, 1, consumer.Config{})
	r := waitTerminal(t, env, []string{p.RequestID}, 20*time.Second)[0]
	if r.Status != asyncevent.StatusSucceeded || r.QueuedAt == 0 || r.StartedAt < r.QueuedAt {
		t.Fatalf("request %+v", r)
	}
	checkLogs(t, env, r)
	page, err := env.Admin.EventRequests(ctx, "ev", "", 10, "")
	if err != nil || len(page.Requests) != 1 {
		t.Fatalf("GSI2 lists %d (%v), want the request", len(page.Requests), err)
	}
	item := rawItem(t, env, "REQ#"+p.RequestID, "META")
	if str(item, "GSI2SK") != dynamostore.QueuedSortKey(r.QueuedAt, r.RequestID) {
		t.Fatalf("GSI2SK %q", str(item, "GSI2SK"))
	}
}

// The known stranding window: the send fails and so does marking the
// request FAILED_FINAL (or ingest dies between the lock transaction and the
// send). The request stays RECEIVED with no message, and a client retry
// only gets its id back as a duplicate. Once it has been RECEIVED for
// RequeueAfter, polls of it still only read it (a GET writes nothing: one
// GetItem each, no write, no message); the sweep enqueues it again, and a
// worker finishes it.
func TestStrandedRequestIsHealedBySweepNotRead(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64 // the clock's advance
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Operations: asyncevent.OperationsConfig{RequeueAfter: time.Minute}, Now: now})
	firstCome(t, env, "ev", 1)
	env.SQS.SetSendFault(asynceventtest.Throttle)
	var n int
	var mu sync.Mutex
	env.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error {
		mu.Lock()
		defer mu.Unlock()
		if n++; n == 2 { // marking the request FAILED_FINAL
			return asynceventtest.Throttle
		}
		return nil
	})
	if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: "u1"}); !errors.Is(err, asyncevent.ErrUnavailable) {
		t.Fatalf("send and mark both failed: %v, want ErrUnavailable", err)
	}
	env.SQS.SetSendFault(nil)
	env.Dynamo.SetTxFault(nil)
	p := participate(t, env.Ingest, "ev", "u1")
	if !p.IsDuplicate {
		t.Fatal("the retry is not a duplicate")
	}
	owner := asyncevent.Caller{UserID: "u1"}
	// Too fresh: reading it does not enqueue it.
	if r, err := env.Query.GetRequest(ctx, owner, p.RequestID); err != nil || r.Status != asyncevent.StatusReceived {
		t.Fatalf("stranded request %+v, %v", r, err)
	}
	if d, _ := env.Queue.Depth(ctx); d != 0 {
		t.Fatalf("a fresh RECEIVED request was enqueued by a read (depth %d)", d)
	}
	// Another user's read neither sees nor heals it.
	if _, err := env.Query.GetRequest(ctx, asyncevent.Caller{UserID: "u2"}, p.RequestID); !errors.Is(err, asyncevent.ErrRequestNotFound) {
		t.Fatalf("another user's read: %v", err)
	}
	skew.Store(int64(time.Minute))
	env.Calls.Reset()
	for range 3 {
		if r, err := env.Query.GetRequest(ctx, owner, p.RequestID); err != nil || r.Status != asyncevent.StatusReceived {
			t.Fatalf("poll of a stranded request: %+v, %v", r, err)
		}
	}
	if gets, all := env.Calls.Count("DynamoDB.GetItem"), env.Calls.Total(); gets != 3 || all != 3 {
		t.Fatalf("3 polls of a stranded request made %d calls (%v), want 3 GetItem and nothing else", all, env.Calls)
	}
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{}); err != nil || res.Stranded != 1 || res.Requeued != 1 {
		t.Fatalf("sweep: %+v, %v; want the stranded request requeued", res, err)
	}
	env.StartWorkers(t, 1, consumer.Config{})
	r := waitTerminal(t, env, []string{p.RequestID}, 20*time.Second)[0]
	if r.Status != asyncevent.StatusSucceeded || r.QueuedAt == 0 {
		t.Fatalf("request %+v", r)
	}
	checkLogs(t, env, r)
}

// hangingQueue is a queue server that stops answering: a send waits until
// its caller gives up, and the server takes the message all the same
// (lands) or loses it.
type hangingQueue struct {
	asyncevent.Queue
	lands func(body string) bool
}

func (q hangingQueue) Send(ctx context.Context, body string) error {
	<-ctx.Done()
	if q.lands(body) {
		if err := q.Queue.Send(context.WithoutCancel(ctx), body); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// A send given up at the caller's deadline (a stalled queue) fails the
// participation with ErrUnavailable (the API's 503) and leaves the
// request RECEIVED, not FAILED_FINAL: a message that did land is decided
// by a worker from there, one that did not is enqueued by the sweep; the
// client's retry gets the same requestId meanwhile.
func TestEnqueueGivenUpAtTheDeadline(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Operations: asyncevent.OperationsConfig{RequeueAfter: time.Minute}, Now: now})
	firstCome(t, env, "ev", 5)
	hung := asyncevent.NewIngest(env.IngestConfig(hangingQueue{Queue: env.Queue, lands: func(body string) bool { return strings.Contains(body, "landed") }}, env.Events))
	ids := map[string]string{}
	for _, u := range []string{"landed", "lost"} {
		dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := hung.Participate(dctx, asyncevent.ParticipateInput{EventID: "ev", UserID: u})
		cancel()
		if !errors.Is(err, asyncevent.ErrUnavailable) {
			t.Fatalf("%s: a send given up: %v, want ErrUnavailable", u, err)
		}
		p := participate(t, env.Ingest, "ev", u)
		if !p.IsDuplicate {
			t.Fatalf("%s: the retry is not a duplicate", u)
		}
		if r := env.Request(t, p.RequestID); r.Status != asyncevent.StatusReceived {
			t.Fatalf("%s: after a send given up the request is %s, want RECEIVED", u, r.Status)
		}
		ids[u] = p.RequestID
	}
	env.StartWorkers(t, 1, consumer.Config{})
	if r := waitTerminal(t, env, []string{ids["landed"]}, 20*time.Second)[0]; r.Status != asyncevent.StatusSucceeded {
		t.Fatalf("the request whose message landed: %+v", r)
	}
	if r := env.Request(t, ids["lost"]); r.Status != asyncevent.StatusReceived {
		t.Fatalf("the request whose message was lost: %s before the sweep, want RECEIVED", r.Status)
	}
	skew.Store(int64(time.Minute + time.Second))
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{}); err != nil || res != (asyncevent.SweepResult{Stranded: 1, Requeued: 1}) {
		t.Fatalf("sweep: %+v %v, want the lost one requeued", res, err)
	}
	for _, r := range waitTerminal(t, env, []string{ids["landed"], ids["lost"]}, 20*time.Second) {
		if r.Status != asyncevent.StatusSucceeded {
			t.Fatalf("request %+v", r)
		}
		checkLogs(t, env, r)
	}
}

// Requests stranded in RECEIVED that nobody reads are found by the
// operator's sweep and enqueued again, once per RequeueAfter; a worker then
// finishes them.
func TestSweepRequeuesStrandedRequests(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Operations: asyncevent.OperationsConfig{RequeueAfter: time.Minute}, Now: now})
	firstCome(t, env, "ev", 5)
	ok := participate(t, env.Ingest, "ev", "fine") // queued normally: never swept
	env.Strand(t, "ev", "u1", "u2")
	if d, _ := env.Queue.Depth(ctx); d != 1 {
		t.Fatalf("queue depth %d, want only the normal request's message", d)
	}
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{}); err != nil || res != (asyncevent.SweepResult{}) {
		t.Fatalf("sweep of fresh requests: %+v %v, want nothing", res, err)
	}
	skew.Store(int64(time.Minute + time.Second))
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{}); err != nil || res != (asyncevent.SweepResult{Stranded: 2, Requeued: 2}) {
		t.Fatalf("sweep: %+v %v, want 2 stranded, 2 requeued", res, err)
	}
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{}); err != nil || res != (asyncevent.SweepResult{Stranded: 2, Requeued: 0}) {
		t.Fatalf("second sweep: %+v %v, want 2 stranded, none requeued again", res, err)
	}
	env.StartWorkers(t, 1, consumer.Config{})
	var ids []string
	for _, u := range []string{"u1", "u2"} {
		p := participate(t, env.Ingest, "ev", u) // a duplicate: the stranded id
		if !p.IsDuplicate {
			t.Fatalf("%s: not a duplicate", u)
		}
		ids = append(ids, p.RequestID)
	}
	for _, r := range waitTerminal(t, env, append(ids, ok.RequestID), 20*time.Second) {
		if r.Status != asyncevent.StatusSucceeded {
			t.Fatalf("request %+v", r)
		}
		checkLogs(t, env, r)
	}
}

// Every event ends, so every item expires: a FIRST_COME event
// created without closesAt closes MaxEventLifetime after it opens, its
// locks expire a week after that, and it takes no participation past its
// end (a lock that expired while the event was open would let the same
// user in again); its own items expire 90 days after its end. An event stored without closesAt (before every event
// got one) ends the same way.
func TestEventWithoutCloseTimeEndsAndItsLocksExpire(t *testing.T) {
	t.Parallel()
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: now, EventCacheTTL: -1})
	cfg, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "open", EventType: asyncevent.FirstCome, Capacity: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := cfg.CreatedAt + asyncevent.MaxEventLifetime.Milliseconds(); cfg.ClosesAt != want {
		t.Fatalf("closesAt %d, want creation + MaxEventLifetime = %d", cfg.ClosesAt, want)
	}
	eventTTL := strconv.FormatInt((cfg.ClosesAt+asyncevent.RequestTTL.Milliseconds())/1000, 10)
	for _, sk := range []string{"CONFIG", "CAPACITY"} {
		if got := num(rawItem(t, env, "EVENT#open", sk), "ttl"); got != eventTTL {
			t.Fatalf("%s ttl %q, want the end + 90 days = %s (it outlives the event's requests)", sk, got, eventTTL)
		}
	}
	participate(t, env.Ingest, "open", "u1")
	lock := rawItem(t, env, "IDEMP#open#u1", "LOCK")
	if want := strconv.FormatInt((cfg.ClosesAt+asyncevent.LockTTLAfter.Milliseconds())/1000, 10); num(lock, "ttl") != want {
		t.Fatalf("lock ttl %q, want the end + 7 days = %s", num(lock, "ttl"), want)
	}
	// An event stored without closesAt by an older version.
	legacy := &asyncevent.EventConfig{EventID: "legacy", EventType: asyncevent.FirstCome, Status: asyncevent.EventOpen,
		CapacityTotal: 10, CreatedAt: cfg.CreatedAt, UpdatedAt: cfg.CreatedAt}
	if err := env.Store.CreateEvent(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	participate(t, env.Ingest, "legacy", "u1")
	if got := num(rawItem(t, env, "IDEMP#legacy#u1", "LOCK"), "ttl"); got == "" {
		t.Fatal("the lock of an event stored without closesAt has no ttl")
	}
	skew.Store(int64(asyncevent.MaxEventLifetime + time.Second))
	for _, ev := range []string{"open", "legacy"} {
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: ev, UserID: "u2"}); !errors.Is(err, asyncevent.ErrEventClosed) {
			t.Errorf("%s after its end: %v, want ErrEventClosed", ev, err)
		}
	}
}

// The sweep stops re-queueing failed enqueues only when a re-send fails.
// A re-queued request that a worker failed for another reason before the
// sweep read it back (FAILED_FINAL / FAILED_VALIDATION) was re-queued: it
// is counted and the sweep goes on.
func TestSweepGoesOnWhenAWorkerFailsARequeuedRequest(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "ev", 10)
	env.SQS.SetSendFault(asynceventtest.Throttle)
	ids := []string{participate(t, env.Ingest, "ev", "u1").RequestID, participate(t, env.Ingest, "ev", "u2").RequestID}
	env.SQS.SetSendFault(nil)

	var fired atomic.Bool
	var failedByWorker string
	hs := &hookSweep{SweepStore: env.Store}
	hs.afterTransition = func(tr *asyncevent.Transition) {
		if tr.To != asyncevent.StatusQueued || !fired.CompareAndSwap(false, true) {
			return
		}
		// The first re-queued request is QUEUED: a worker takes it and
		// fails it, before the sweep reads it back.
		failedByWorker = tr.RequestID
		for _, w := range []*asyncevent.Transition{
			{From: []asyncevent.Status{asyncevent.StatusQueued}, To: asyncevent.StatusProcessing, At: tr.At + 1, StartedAt: tr.At + 1, Message: "processing"},
			{From: []asyncevent.Status{asyncevent.StatusProcessing}, To: asyncevent.StatusFailedFinal, At: tr.At + 2, FinishedAt: tr.At + 2,
				UIResult: asyncevent.ResultFailed, ResultCode: asyncevent.CodeFailedValidation, FailureClass: asyncevent.NonRetryable,
				ErrorCode: "UNKNOWN_EVENT", ErrorMessage: "injected", Message: "UNKNOWN_EVENT"},
		} {
			w.RequestID, w.EventID, w.UserID = tr.RequestID, tr.EventID, tr.UserID
			if err := env.Store.Transition(ctx, w); err != nil {
				t.Errorf("worker's %s: %v", w.To, err)
			}
		}
	}
	res, err := operations(env, hs).SweepStranded(ctx, asyncevent.SweepOptions{RequeueFailedEnqueue: true})
	if err != nil || res != (asyncevent.SweepResult{FailedEnqueue: 2, FailedEnqueueRequeued: 2}) {
		t.Fatalf("sweep: %+v %v, want both failed enqueues re-queued", res, err)
	}
	for _, id := range ids {
		r := env.Request(t, id)
		want := asyncevent.StatusQueued
		if id == failedByWorker {
			want = asyncevent.StatusFailedFinal
		}
		if r.Status != want {
			t.Errorf("%s is %s/%s, want %s", id, r.Status, r.ResultCode, want)
		}
	}
	if n, err := env.Queue.Depth(ctx); err != nil || n != 2 {
		t.Fatalf("queue depth %d %v, want 2 (both re-sent)", n, err)
	}
}
