package asynceventevents_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
)

// The background processes wait out a stall: with the workers (their
// allocators and line keepers) and the publisher running, the test's own
// DynamoDB Local is paused (SIGSTOP) for 2.5 s while requests are being
// decided and published. No process gives up or needs a restart: once it
// resumes, every request is decided, exactly the first N win, and every
// one has its requested and processed events, once each after
// de-duplication.
func TestBackgroundProcessesWaitOutAStall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stack, err := standin.Start(ctx, standin.Config{DynamoDB: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stack.Close() })
	env := asynceventtest.New(t, asynceventtest.Options{Stream: true, DynamoDBEndpoint: stack.DynamoDBEndpoint})
	cps := stream.NewDynamoCheckpoints(env.DDB.DB, env.DDB.Table.Name()+"-cp")
	if err := cps.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	const users, seats = 80, 20
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: seats,
		ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, users)
	for i := range users {
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = p.RequestID
	}
	dir := t.TempDir()
	sink, err := filesink.Open(filesink.Config{Dir: dir, BufferInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close() // after the publisher stops
	pctx, stopPublisher := context.WithCancel(ctx)
	published := make(chan error, 1)
	go func() {
		var cfg asynceventevents.Config
		cfg.Table, cfg.AWS, cfg.DynamoDB = env.DDB.Table.Name(), &env.DDB.Config, env.DDB.Client
		cfg.Streams = stream.NewClient(env.DDB.Config, func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(stack.DynamoDBEndpoint) })
		cfg.CheckpointTable, cfg.Consumer, cfg.Poll, cfg.Sink = env.DDB.Table.Name()+"-cp", "asyncevent-events", 50*time.Millisecond, sink
		published <- asynceventevents.Run(pctx, cfg)
	}()
	defer func() {
		stopPublisher()
		if err := <-published; err != nil {
			t.Error(err)
		}
	}()
	stopWorkers := env.StartWorkers(t, 2, consumer.Config{Concurrency: 4})

	// Mid-stream: some requests decided and published, not all.
	processed := func() int {
		if err := sink.Flush(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range readEvents(t, dir) {
			if d.EventKind == analytics.ParticipationProcessed {
				n++
			}
		}
		return n
	}
	asynceventtest.Eventually(t, time.Minute, "the first processed events", func() (bool, error) { return processed() > 0, nil })
	resume, err := stack.Pause(standin.DynamoDB)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	if n := processed(); n >= users {
		t.Fatalf("%d processed events published by the resume: the stall came too late to show anything", n)
	} else {
		t.Logf("%d of %d requests decided and published when DynamoDB Local was paused", n, users)
	}

	asynceventtest.Eventually(t, 2*time.Minute, "every request decided and published", decidedAndPublished(t, env, sink, dir, ids))
	t.Logf("every request decided and published %s after the resume", time.Since(resumed).Round(time.Millisecond))
	stopWorkers()
	_, perRequest := dedup(t, readEvents(t, dir))
	for _, id := range ids {
		if got := perRequest[id]; got[analytics.ParticipationRequested] != 1 || got[analytics.ParticipationProcessed] != 1 {
			t.Errorf("%s: %d requested and %d processed events after de-duplication, want 1 each", id,
				got[analytics.ParticipationRequested], got[analytics.ParticipationProcessed])
		}
	}
	if f := asynceventtest.MeasureFairness(env.EventRequests(t, "ev")); !f.FirstN() || f.Winners != seats || f.Requests != users {
		t.Errorf("fairness %v: want all %d decided and exactly the first %d to win", f, users, seats)
	}
}
