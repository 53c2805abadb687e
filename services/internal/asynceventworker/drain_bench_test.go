package asynceventworker_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
)

// rawTx2Rate measures the stand-in's raw rate of a plain sequential loop of
// 2-write TransactWriteItems (two Puts of fresh keys, as one message's
// decision writes two items), in transactions per second.
func rawTx2Rate(b *testing.B, env *asynceventtest.Env, n int) float64 {
	b.Helper()
	ctx := context.Background()
	table := aws.String(env.DDB.Table.Name())
	put := func(pk, sk string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: table, Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk},
			"status": &types.AttributeValueMemberS{Value: "SUCCEEDED"},
		}, ConditionExpression: aws.String("attribute_not_exists(PK)")}}
	}
	start := time.Now()
	for i := range n {
		pk := fmt.Sprintf("RAW#%d", i)
		if _, err := env.DDB.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems: []types.TransactWriteItem{put(pk, "A"), put(pk, "B")},
		}); err != nil {
			b.Fatal(err)
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkDrain measures how fast one worker (the real handler and
// consumer runtime) drains a queue of b.N FIRST_COME participations of one
// event (every one wins a seat: 2 transactions per message, all on the
// event's capacity item), at each concurrency and batch size, against
// DynamoDB Local and local-aws-sqs. It reports messages/s and the ratio to
// the raw 2-write transaction rate measured on the same table just before
// the drain (after the participations warmed the stand-in up), so that both
// see the same machine load.
// Run with a fixed count, e.g. -benchtime=300x.
func BenchmarkDrain(b *testing.B) {
	for _, c := range []int{1, 5, 10, 20} {
		for _, batch := range []int{1, 10} {
			b.Run(fmt.Sprintf("concurrency=%d/batch=%d", c, batch), func(b *testing.B) {
				drain(b, c, batch)
			})
		}
	}
}

func drain(b *testing.B, concurrency, batch int) {
	ctx := context.Background()
	env := asynceventtest.New(b, asynceventtest.Options{})
	// Delivery ordering: one delivery per message decides it, as the
	// raw 2-write transaction loop it is compared with.
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: int64(b.N),
		Ordering: asyncevent.OrderDelivery, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range b.N {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%05d", i)}); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	raw := rawTx2Rate(b, env, 100)
	w := asyncevent.NewWorker(asyncevent.WorkerConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue,
		Allocator: asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: env.Store})})
	h := asynceventworker.Handler(w, slog.New(slog.DiscardHandler), nil, env.Queue)
	var acked atomic.Int64
	all := make(chan struct{})
	count := func(ctx context.Context, m consumer.Message) bool {
		ok := h(ctx, m)
		if ok && acked.Add(1) == int64(b.N) {
			close(all)
		}
		return ok
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	b.ResetTimer()
	go func() {
		defer close(done)
		_ = consumer.Run(wctx, env.Queue, count, consumer.Config{Concurrency: concurrency, Batch: batch, Wait: time.Second, Visibility: 30 * time.Second})
	}()
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Fatalf("drained %d of %d in 5 min", acked.Load(), b.N)
	}
	b.StopTimer()
	stop()
	<-done
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "msgs/s")
	b.ReportMetric(raw, "raw-tx2/s")
	b.ReportMetric(rate/raw, "x-raw-tx2")
	st, err := env.Admin.EventStats(ctx, "ev")
	if err != nil || st.ByStatus[asyncevent.StatusSucceeded] != b.N || !st.InvariantOK {
		b.Fatalf("after the drain: %+v %v", st, err)
	}
}
