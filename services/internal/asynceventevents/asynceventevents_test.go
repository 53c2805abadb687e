package asynceventevents_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics/schematest"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/testkit/proctest"
)

// TestMain runs the tests, or, in a child, a publisher configured from
// the environment.
func TestMain(m *testing.M) {
	var cfg asynceventevents.Config
	proctest.Main(m, standin.Config{DynamoDB: true, SQS: true}, "events-child", cfg.Declare, func(ctx context.Context, awsCfg aws.Config) error {
		cfg.AWS = &awsCfg
		return asynceventevents.Run(ctx, cfg)
	})
}

// flakySink fails its first puts, as a throttled EventBridge or a full
// disk would, then passes them on.
type flakySink struct {
	next  eventsink.Sink
	mu    sync.Mutex
	fails int
}

func (f *flakySink) Put(ctx context.Context, evs []eventsink.Envelope) error {
	f.mu.Lock()
	fail := f.fails > 0
	f.fails--
	f.mu.Unlock()
	if fail {
		return errors.New("ThrottlingException: rate exceeded")
	}
	return f.next.Put(ctx, evs)
}

// readEvents reads every event the file sink published under dir, each
// line checked against the schema.
func readEvents(t *testing.T, dir string) []analytics.Detail {
	t.Helper()
	objs, err := filesink.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []analytics.Detail
	for _, o := range objs {
		for _, line := range o.Lines {
			if err := schematest.ValidateJSON(line); err != nil {
				t.Errorf("%s: %v", o.Path, err)
			}
			var ev struct{ Detail analytics.Detail }
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatal(err)
			}
			out = append(out, ev.Detail)
		}
	}
	return out
}

// The publisher is SIGKILLed mid-stream, and its successor's sink fails
// at first; meanwhile some messages go to the DLQ. Afterwards every
// terminal request has exactly one processed event after de-duplication,
// none is missing, and every dead-lettered request has its
// deadLettered failure.
func TestNoEventLostWhenThePublisherIsKilled(t *testing.T) {
	t.Parallel()
	const maxReceives = 2
	env := asynceventtest.New(t, asynceventtest.Options{MaxReceives: maxReceives, Stream: true, WorkerID: "worker"})
	ctx := context.Background()
	cps := stream.NewDynamoCheckpoints(env.DDB.DB, env.DDB.Table.Name()+"-cp")
	if err := cps.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	// Delivery ordering: a doomed request's message is retried at once
	// until the DLQ takes it, without an allocation wait in between.
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 20, Ordering: asyncevent.OrderDelivery}); err != nil {
		t.Fatal(err)
	}
	// Requests of doomed users always fail retryably: their messages end in the DLQ.
	doomed := map[string]bool{}
	var ids []string
	for i := range 60 {
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.RequestID)
		if i%20 == 0 {
			doomed["REQ#"+p.RequestID] = true
		}
	}
	env.Dynamo.SetTxFault(func(in *dynamodb.TransactWriteItemsInput) error {
		for _, ti := range in.TransactItems {
			if ti.Update != nil {
				if pk, ok := ti.Update.Key["PK"].(*types.AttributeValueMemberS); ok && doomed[pk.Value] {
					return &types.ProvisionedThroughputExceededException{Message: aws.String("injected")}
				}
			}
		}
		return nil
	})

	dir := t.TempDir()
	child := proctest.Start(t,
		"PACER_ASYNCEVENT_TABLE="+env.DDB.Table.Name(), "PACER_ASYNCEVENT_SETUP=0",
		"PACER_ASYNCEVENT_MAX_RECEIVES="+fmt.Sprint(maxReceives),
		"PACER_EVENTS_CHECKPOINT_TABLE="+env.DDB.Table.Name()+"-cp", "PACER_EVENTS_SINK=file", "PACER_EVENTS_DIR="+dir, "PACER_EVENTS_OPS_ADDR=127.0.0.1:0",
		"PACER_EVENTS_BUFFER_INTERVAL=300ms", "PACER_EVENTS_POLL=50ms")
	stopWorkers := env.StartWorkers(t, 3, consumer.Config{Concurrency: 4})
	// Kill the publisher once it has published some events, mid-stream.
	asynceventtest.Eventually(t, 60*time.Second, "the first published events", func() (bool, error) {
		return len(readEvents(t, dir)) > 0, nil
	})
	child.Kill()
	published := len(readEvents(t, dir))

	// A successor, whose sink fails its first puts, takes over from the
	// checkpoints.
	sink, err := filesink.Open(filesink.Config{Dir: dir, BufferInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close() // after the publisher stops
	defer startPublisher(t, env, &flakySink{next: sink, fails: 3}, maxReceives)()

	// Wait until every request is terminal or dead-lettered, and every
	// terminal one has its processed event.
	asynceventtest.Eventually(t, 120*time.Second, "every request settled and published", func() (bool, error) {
		if err := sink.Flush(); err != nil {
			return false, err
		}
		processed := map[string]bool{}
		dead := map[string]bool{}
		for _, d := range readEvents(t, dir) {
			processed[d.RequestID] = processed[d.RequestID] || d.EventKind == analytics.ParticipationProcessed
			dead[d.RequestID] = dead[d.RequestID] || d.DeadLettered
		}
		for _, id := range ids {
			r := env.Request(t, id)
			if r.Status.Terminal() != processed[id] {
				return false, fmt.Errorf("%s is %s, processed event: %v", id, r.Status, processed[id])
			}
			if !r.Status.Terminal() && !dead[id] {
				return false, fmt.Errorf("%s is %s, not yet dead-lettered", id, r.Status)
			}
		}
		return true, nil
	})
	stopWorkers()

	events := readEvents(t, dir)
	byID, perRequest := dedup(t, events)
	succeeded, deadLettered := 0, 0
	for _, id := range ids {
		r := env.Request(t, id)
		got := perRequest[id]
		if got[analytics.ParticipationRequested] != 1 {
			t.Errorf("%s: %d requested events", id, got[analytics.ParticipationRequested])
		}
		switch {
		case r.Status.Terminal():
			if got[analytics.ParticipationProcessed] != 1 || got[analytics.DelayMeasured] != 1 {
				t.Errorf("%s (%s): %d processed and %d delay events after de-duplication, want 1 each", id, r.Status,
					got[analytics.ParticipationProcessed], got[analytics.DelayMeasured])
			}
			if r.Status == asyncevent.StatusSucceeded {
				succeeded++
			}
		default:
			deadLettered++
			if r.Attempts < asyncevent.DeadLetterReceive(maxReceives) {
				t.Errorf("%s is %s after %d attempts", id, r.Status, r.Attempts)
			}
		}
	}
	// Every worker write names the workers (all "worker" here), ingest's
	// none: a doomed request's only worker write is its recorded failure.
	for _, d := range byID {
		want := "worker"
		if d.EventKind == analytics.ParticipationRequested {
			want = ""
		}
		if d.WorkerID != want {
			t.Errorf("%s of %s (%s, %s): workerId %q, want %q", d.EventKind, d.RequestID, d.Status, d.FailureClass, d.WorkerID, want)
		}
	}
	if succeeded != 20 || deadLettered != len(doomed) {
		t.Errorf("%d succeeded and %d dead-lettered, want 20 and %d", succeeded, deadLettered, len(doomed))
	}
	t.Logf("%d events published before the kill; %d lines in all, %d after de-duplication", published, len(events), len(byID))
}

// startPublisher runs a publisher in this process, reading env's table's
// stream from the checkpoints in <table>-cp into sink, until the returned
// stop is called.
func startPublisher(t *testing.T, env *asynceventtest.Env, sink eventsink.Sink, maxReceives int) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		var cfg asynceventevents.Config
		cfg.Table, cfg.MaxReceives, cfg.AWS, cfg.Log = env.DDB.Table.Name(), maxReceives, &env.DDB.Config, nil
		cfg.CheckpointTable, cfg.Consumer, cfg.Poll = env.DDB.Table.Name()+"-cp", "asyncevent-events", 50*time.Millisecond
		cfg.Sink = sink
		done <- asynceventevents.Run(ctx, cfg)
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// decidedAndPublished is the condition that every request of ids is
// decided and its processed event is among what sink published under
// dir.
func decidedAndPublished(t *testing.T, env *asynceventtest.Env, sink *filesink.Sink, dir string, ids []string) func() (bool, error) {
	return func() (bool, error) {
		if err := sink.Flush(); err != nil {
			return false, err
		}
		processed := map[string]bool{}
		for _, d := range readEvents(t, dir) {
			processed[d.RequestID] = processed[d.RequestID] || d.EventKind == analytics.ParticipationProcessed
		}
		for _, id := range ids {
			if r := env.Request(t, id); !r.Status.Terminal() || !processed[id] {
				return false, fmt.Errorf("%s is %s, processed event: %v", id, r.Status, processed[id])
			}
		}
		return true, nil
	}
}

// dedup de-duplicates events by id, as every query does (failing if two
// different events share an id), and counts each request's events by kind.
func dedup(t *testing.T, events []analytics.Detail) (map[string]analytics.Detail, map[string]map[analytics.DetailType]int) {
	t.Helper()
	byID := map[string]analytics.Detail{}
	for _, d := range events {
		if prev, dup := byID[d.ID]; dup && !sameJSON(prev, d) {
			t.Errorf("two different events share id %s:\n%+v\n%+v", d.ID, prev, d)
		}
		byID[d.ID] = d
	}
	perRequest := map[string]map[analytics.DetailType]int{}
	for _, d := range byID {
		if perRequest[d.RequestID] == nil {
			perRequest[d.RequestID] = map[analytics.DetailType]int{}
		}
		perRequest[d.RequestID][d.EventKind]++
	}
	return byID, perRequest
}

func sameJSON(a, b analytics.Detail) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
