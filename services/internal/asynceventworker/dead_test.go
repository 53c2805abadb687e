package asynceventworker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
)

// moveFaults wraps the worker's SQS client: it fails the DLQ send of the
// messages of some requests (the worker cannot tag them) and the
// main-queue delete of others (the fault between the dead-letter send and
// the delete).
type moveFaults struct {
	sqsqueue.Client
	mainURL, dlqURL string

	mu         sync.Mutex
	body       map[string]string // receipt handle → body
	failSend   []string          // request ids whose DLQ send fails
	failDelete []string          // request ids whose main-queue delete fails
	sendFailed int
	delFailed  int
}

func (f *moveFaults) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	out, err := f.Client.ReceiveMessage(ctx, in, opts...)
	if err == nil {
		f.mu.Lock()
		for _, m := range out.Messages {
			f.body[aws.ToString(m.ReceiptHandle)] = aws.ToString(m.Body)
		}
		f.mu.Unlock()
	}
	return out, err
}

func mentions(body string, ids []string) bool {
	for _, id := range ids {
		if strings.Contains(body, id) {
			return true
		}
	}
	return false
}

func (f *moveFaults) SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.mu.Lock()
	fail := aws.ToString(in.QueueUrl) == f.dlqURL && mentions(aws.ToString(in.MessageBody), f.failSend)
	if fail {
		f.sendFailed++
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("injected: DLQ send failed")
	}
	return f.Client.SendMessage(ctx, in, opts...)
}

func (f *moveFaults) DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	if aws.ToString(in.QueueUrl) != f.mainURL {
		return f.Client.DeleteMessageBatch(ctx, in, opts...)
	}
	// Delete the other entries for real; report the faulted ones failed.
	keep := *in
	keep.Entries = nil
	var failed []sqstypes.BatchResultErrorEntry
	f.mu.Lock()
	for _, e := range in.Entries {
		if mentions(f.body[aws.ToString(e.ReceiptHandle)], f.failDelete) {
			f.delFailed++
			failed = append(failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("Injected"), Message: aws.String("injected: main-queue delete failed")})
			continue
		}
		keep.Entries = append(keep.Entries, e)
	}
	f.mu.Unlock()
	out := &sqs.DeleteMessageBatchOutput{}
	if len(keep.Entries) > 0 {
		var err error
		if out, err = f.Client.DeleteMessageBatch(ctx, &keep, opts...); err != nil {
			return nil, err
		}
	}
	out.Failed = append(out.Failed, failed...)
	return out, nil
}

// txRequestIDs returns the request ids a transaction's keys name.
func txRequestIDs(in *dynamodb.TransactWriteItemsInput) string {
	var b strings.Builder
	for _, it := range in.TransactItems {
		for _, k := range []map[string]types.AttributeValue{keyOf(it)} {
			for _, v := range k {
				if s, ok := v.(*types.AttributeValueMemberS); ok {
					b.WriteString(s.Value + " ")
				}
			}
		}
	}
	return b.String()
}

func keyOf(it types.TransactWriteItem) map[string]types.AttributeValue {
	switch {
	case it.Update != nil:
		return it.Update.Key
	case it.ConditionCheck != nil:
		return it.ConditionCheck.Key
	case it.Delete != nil:
		return it.Delete.Key
	case it.Put != nil:
		return it.Put.Item
	}
	return nil
}

// Messages whose every attempt fails reach the DLQ tagged with their class
// (THROTTLED, TIMEOUT), or untagged (UNKNOWN) when the worker cannot send
// them there. A fault between the dead-letter send and the main-queue
// delete makes SQS move a second, untagged copy: the view counts each
// message once, under its tag, and the class redrive moves one copy and
// drops the other. After redriving each class every request succeeds
// exactly once: no message lost, none delivered twice.
func TestDeadLetterByClass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := asynceventtest.New(t, asynceventtest.Options{MaxReceives: 2})
	// Delivery ordering: each injected fault fails the delivery that
	// decides. (An arrival candidate's waiting class, ALLOCATING, is in
	// TestDeadClassOf.)
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 20,
		Ordering: asyncevent.OrderDelivery, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 8 {
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.RequestID)
	}
	throttled, timedOut, untagged := ids[:3], ids[3:6], ids[6:]
	faults := &moveFaults{Client: env.SQS, mainURL: env.Queue.URL(), dlqURL: env.Queue.DLQURL(),
		body: map[string]string{}, failSend: untagged, failDelete: timedOut}
	var failing sync.Map // request id → error; cleared to heal
	for _, id := range append(append([]string{}, throttled...), untagged...) {
		failing.Store(id, asynceventtest.Throttle)
	}
	for _, id := range timedOut {
		failing.Store(id, fmt.Errorf("injected: %w", context.DeadlineExceeded))
	}
	env.Dynamo.SetTxFault(func(in *dynamodb.TransactWriteItemsInput) error {
		keys := txRequestIDs(in)
		var err error
		failing.Range(func(id, e any) bool {
			if strings.Contains(keys, id.(string)) {
				err = e.(error)
				return false
			}
			return true
		})
		return err
	})

	q, err := sqsqueue.Open(ctx, faults, sqsqueue.Config{Name: env.QueueName})
	if err != nil {
		t.Fatal(err)
	}
	if q.MaxReceives() != 2 {
		t.Fatalf("MaxReceives %d, want the queue's 2", q.MaxReceives())
	}
	reg := prometheus.NewRegistry()
	wm := asynceventbackend.NewWorkerMetrics(reg, 5)
	w := asyncevent.NewWorker(asyncevent.WorkerConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue,
		Allocator: asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: env.Store})})
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = consumer.Run(wctx, q, asynceventworker.Handler(w, slog.New(slog.DiscardHandler), wm, q),
			consumer.Config{Concurrency: 5, Visibility: 3 * time.Second, Wait: time.Second})
	}()
	t.Cleanup(func() { stop(); <-done })

	// 3 tagged THROTTLED, 3 tagged TIMEOUT plus their 3 untagged copies, 2
	// untagged.
	asynceventtest.Eventually(t, 60*time.Second, "11 messages in the DLQ", func() (bool, error) {
		_, dead, err := env.Queue.Depths(ctx)
		return dead == 11, fmt.Errorf("DLQ depth %d, err %v", dead, err)
	})
	view, err := env.Admin.DeadLetters(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	want := map[asyncevent.DeadClass]int{asyncevent.DeadThrottled: 3, asyncevent.DeadTimeout: 3, asyncevent.DeadUnknown: 2,
		asyncevent.DeadConflict: 0, asyncevent.DeadDependency: 0, asyncevent.DeadAllocating: 0}
	if fmt.Sprint(view.ByClass) != fmt.Sprint(want) || view.Scanned != 11 || view.Copies != 3 || !view.Complete || len(view.Messages) != 8 {
		t.Fatalf("view: byClass %v scanned %d copies %d complete %v messages %d; want %v, 11, 3, true, 8",
			view.ByClass, view.Scanned, view.Copies, view.Complete, len(view.Messages), want)
	}
	for _, m := range view.Messages {
		wantCode := map[asyncevent.DeadClass]string{asyncevent.DeadThrottled: "ThrottlingException", asyncevent.DeadTimeout: "TIMEOUT", asyncevent.DeadUnknown: ""}[m.Class]
		if m.ErrorCode != wantCode || m.Message == nil {
			t.Fatalf("DLQ message %+v: want errorCode %q and a decoded message", m, wantCode)
		}
	}
	faults.mu.Lock()
	t.Logf("faults injected: %d DLQ sends, %d main-queue deletes", faults.sendFailed, faults.delFailed)
	if faults.sendFailed != 2 || faults.delFailed == 0 {
		t.Fatalf("faults: %d DLQ sends failed (want 2), %d deletes failed (want > 0)", faults.sendFailed, faults.delFailed)
	}
	faults.mu.Unlock()
	for c, n := range map[string]float64{"THROTTLED": 3, "TIMEOUT": 3, "CONFLICT": 0} {
		if got := counter(t, reg, "pacer_worker_dead_lettered_total", "class", c); got != n {
			t.Fatalf("pacer_worker_dead_lettered_total{class=%q} = %v, want %v", c, got, n)
		}
	}

	// Heal, then redrive class by class.
	failing.Clear()
	faults.mu.Lock()
	faults.failSend, faults.failDelete = nil, nil
	faults.mu.Unlock()
	for _, step := range []struct {
		class          asyncevent.DeadClass
		ids            []string
		moved, dropped int
	}{{asyncevent.DeadTimeout, timedOut, 3, 3}, {asyncevent.DeadUnknown, untagged, 2, 0}, {asyncevent.DeadThrottled, throttled, 3, 0}} {
		res, err := env.Admin.RedriveClass(ctx, step.class)
		if err != nil || res.Moved != step.moved || res.Dropped != step.dropped || res.More {
			t.Fatalf("redrive %s: %+v %v; want moved %d dropped %d", step.class, res, err, step.moved, step.dropped)
		}
		asynceventtest.Eventually(t, 30*time.Second, string(step.class)+" requests to succeed", func() (bool, error) {
			for _, id := range step.ids {
				if r := env.Request(t, id); r.Status != asyncevent.StatusSucceeded {
					return false, fmt.Errorf("%s is %s", id, r.Status)
				}
			}
			return true, nil
		})
		view, err := env.Admin.DeadLetters(ctx, 0)
		if err != nil || view.ByClass[step.class] != 0 {
			t.Fatalf("after redriving %s: %v %v", step.class, view.ByClass, err)
		}
	}
	asynceventtest.Eventually(t, 15*time.Second, "the queues to be empty", func() (bool, error) {
		main, dead, err := env.Queue.Depths(ctx)
		return main == 0 && dead == 0, fmt.Errorf("main %d dlq %d, err %v", main, dead, err)
	})
	// Each request was delivered once after its redrive: a dropped copy
	// redriven too would show as a ninth "succeeded" (done-already).
	if got := counter(t, reg, "pacer_worker_messages_total", "outcome", asynceventbackend.Succeeded); got != 8 {
		t.Fatalf("succeeded deliveries %v, want 8", got)
	}
	st, err := env.Admin.EventStats(ctx, "ev")
	if err != nil || !st.InvariantOK || st.CapacityRemaining != 12 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

// counter returns the value of the counter name{label=value} in reg.
func counter(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}
