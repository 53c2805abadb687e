package asynceventworker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/internal/awsfixture"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// The worker's cost benchmark: one delivery of a FIRST_COME `delivery`
// event decided (PROCESSING, then SUCCEEDED with a seat), Pacer's handler
// as Run builds it against bareWorker, both on internal/awsfixture, which
// answers every call at once: impl=pacer / impl=bare is Pacer's overhead
// (make bench prints it).

const costEvent = "e1"

// costFixture answers the event's read (FIRST_COME, open, with ordering).
func costFixture(ordering string) *awsfixture.Server {
	f := awsfixture.New()
	now := time.Now().UnixMilli()
	event := json.RawMessage(fmt.Sprintf(`{"Item":{"PK":{"S":"EVENT#%[1]s"},"SK":{"S":"CONFIG"},"entityType":{"S":"EVENT_CONFIG"},"eventId":{"S":"%[1]s"},`+
		`"eventType":{"S":"FIRST_COME"},"status":{"S":"OPEN"},"capacityTotal":{"N":"100"},"ordering":{"S":"%[4]s"},"closesAt":{"N":"%[2]d"},"createdAt":{"N":"%[3]d"}}}`,
		costEvent, now+3600_000, now, ordering))
	f.Handle("DynamoDB.GetItem", func([]byte) any { return event })
	return f
}

// pacerWorker is the handler Run gives the consumer, over f.
func pacerWorker(tb testing.TB, f *awsfixture.Server) consumer.Handler {
	tb.Helper()
	roles, wm, log := openWorkerRoles(tb, f)
	return Handler(roles.Worker, log, wm, roles.Queue)
}

// openWorkerRoles builds the worker process's roles over f as Run builds
// them (openRoles), with the metrics and the logger it gives them.
func openWorkerRoles(tb testing.TB, f *awsfixture.Server) (*asynceventbackend.WorkerRoles, *asynceventbackend.WorkerMetrics, *slog.Logger) {
	tb.Helper()
	awsCfg := f.Config()
	reg := metrics.NewRegistry()
	wm := asynceventbackend.NewWorkerMetrics(reg, 10)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := Config{Config: asynceventbackend.Config{AWS: &awsCfg, WorkerID: "w1", Log: log}}
	roles, err := openRoles(context.Background(), &cfg, wm, metrics.NewAWS(reg, "AsyncEventTable"))
	if err != nil {
		tb.Fatal(err)
	}
	return roles, wm, log
}

func bareHandler(f *awsfixture.Server) consumer.Handler {
	return (&bareWorker{db: awsclient.DynamoDB(f.Config()), table: "AsyncEventTable", workerID: "w1"}).handle
}

func costMessage(i int) consumer.Message {
	body := fmt.Sprintf(`{"v":1,"requestId":"01M8FFQ73T18893C7W07K%05d","eventId":"%s","userId":"user-%d","eventType":"FIRST_COME"}`, i%100000, costEvent, i)
	return consumer.Message{ID: fmt.Sprint(i), Body: body, ReceiptHandle: "r", ReceiveCount: 1, SentAt: time.Now()}
}

// BenchmarkDecisionCost is one delivery decided: two transactions.
func BenchmarkDecisionCost(b *testing.B) {
	for _, impl := range []string{"pacer", "bare"} {
		b.Run("impl="+impl, func(b *testing.B) {
			f := costFixture("delivery")
			defer f.Close()
			h := bareHandler(f)
			if impl == "pacer" {
				h = pacerWorker(b, f)
			}
			ctx := context.Background()
			if !h(ctx, costMessage(0)) { // warm: Pacer reads the event once
				b.Fatal("not acked")
			}
			f.Reset()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if !h(ctx, costMessage(i)) {
					b.Fatal("not acked")
				}
			}
			b.ReportMetric(float64(f.Total())/float64(i), "aws-calls/op")
		})
	}
}

// TestBareDecidesAsPacerDoes holds the baseline to Pacer's work: the same
// two transactions, with the same items' attributes and expressions.
func TestBareDecidesAsPacerDoes(t *testing.T) {
	run := func(h func(*awsfixture.Server) consumer.Handler) []string {
		f := costFixture("delivery")
		defer f.Close()
		handle := h(f)
		if !handle(context.Background(), costMessage(0)) {
			t.Fatal("not acked")
		}
		r := f.Record("DynamoDB.TransactWriteItems")
		f.Reset()
		if !handle(context.Background(), costMessage(1)) {
			t.Fatal("not acked")
		}
		if f.Total() != 2 {
			t.Errorf("%d AWS calls, want 2", f.Total())
		}
		return r.Shapes()
	}
	pacer := run(func(f *awsfixture.Server) consumer.Handler { return pacerWorker(t, f) })
	bare := run(bareHandler)
	if len(pacer) != 2 || !slices.Equal(pacer, bare) {
		t.Errorf("a decision's calls differ:\npacer:\n%s\nbare:\n%s", strings.Join(pacer, "\n"), strings.Join(bare, "\n"))
	}
}
