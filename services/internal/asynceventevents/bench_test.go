package asynceventevents_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
)

// The sink path's throughput: stream records (a request finishing, 2
// events each) decoded, mapped and written to the file sink (fsync per
// batch), in batches of 100 records, as the stream hands them over.
func BenchmarkPublishToFileSink(b *testing.B) {
	sink, err := filesink.Open(filesink.Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	batch := make([]stream.Record, 100)
	for i := range batch {
		old := dynamostore.RequestItem{RequestID: fmt.Sprintf("req-%03d", i), EventID: "ev", UserID: "u", EventType: asyncevent.FirstCome,
			Status: asyncevent.StatusProcessing, RequestedAt: 1795683600000, QueuedAt: 1795683600010, StartedAt: 1795683600100, Attempts: 1}
		cur := old
		cur.Status, cur.FinishedAt, cur.UIResult, cur.ResultCode = asyncevent.StatusSucceeded, 1795683600200, asyncevent.ResultSuccess, asyncevent.CodeSuccess
		oi, _ := attributevalue.MarshalMap(old)
		ci, _ := attributevalue.MarshalMap(cur)
		oi["entityType"], _ = attributevalue.Marshal("REQUEST")
		ci["entityType"] = oi["entityType"]
		batch[i] = stream.Record{Kind: stream.Modify, OldImage: oi, NewImage: ci, SequenceNumber: fmt.Sprint(i)}
	}
	h := asynceventevents.Handler(analytics.Mapper{}, sink, nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := h(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*len(batch)*b.N)/b.Elapsed().Seconds(), "events/s")
}

// Worker drain rate (3 workers, 100 participations) without and with the
// publisher reading the table's stream at the same time: the events'
// overhead on the worker is the ratio of the two.
func BenchmarkWorkerDrain(b *testing.B) {
	for _, publish := range []bool{false, true} {
		b.Run(fmt.Sprintf("events=%v", publish), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				env := asynceventtest.New(b, asynceventtest.Options{Stream: true})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				if publish {
					go func() {
						var cfg asynceventevents.Config
						cfg.Table, cfg.AWS, cfg.Setup = env.DDB.Table.Name(), &env.DDB.Config, true
						cfg.CheckpointTable, cfg.Consumer, cfg.Poll = env.DDB.Table.Name()+"-cp", "bench", 100*time.Millisecond
						cfg.SinkKind, cfg.Dir, cfg.BufferInterval = asynceventevents.SinkFile, b.TempDir(), time.Second
						done <- asynceventevents.Run(ctx, cfg)
					}()
				} else {
					done <- nil
				}
				if _, err := env.Admin.CreateEvent(context.Background(), asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 50}); err != nil {
					b.Fatal(err)
				}
				var ids []string
				for u := range 100 {
					p, err := env.Ingest.Participate(context.Background(), asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%03d", u)})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, p.RequestID)
				}
				b.StartTimer()
				stop := env.StartWorkers(b, 3, consumer.Config{Concurrency: 8})
				asynceventtest.Eventually(b, 2*time.Minute, "drained", func() (bool, error) {
					for _, id := range ids {
						if !env.Request(b, id).Status.Terminal() {
							return false, nil
						}
					}
					return true, nil
				})
				b.StopTimer()
				stop()
				cancel()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
