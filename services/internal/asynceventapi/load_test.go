package asynceventapi_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/config"
)

// BenchmarkParticipationLoad drives PACER_LOAD_N (default 500) distinct
// participants, PACER_LOAD_CONCURRENCY (default 50) at a time, through the
// real HTTP API on loopback against the local stand-ins, with
// PACER_LOAD_WORKERS (default 2) workers draining the queue. By default the
// workers start once ingest is done (the queue absorbs the spike, then
// drains: docs/runbooks/QueueStalled.md's case), so the ingest figures are the API's
// alone; PACER_LOAD_OVERLAP=1 runs them during ingest. It reports
// ingest latency percentiles, ingest throughput, the time until every
// request is decided, and the ratio of the ingest rate to what the
// stand-in allows for 3 calls per request (its raw PutItem rate / 3,
// measured in the same run with the same concurrency). Run it once:
//
//	go test ./services/internal/asynceventapi -run '^$' -bench ParticipationLoad -benchtime 1x
func BenchmarkParticipationLoad(b *testing.B) {
	var n, conc, workers int
	var overlap bool
	if err := config.FromEnv("load", func(s *config.Set) {
		s.Int(&n, "n", "PACER_LOAD_N", 500, "requests")
		s.Int(&conc, "concurrency", "PACER_LOAD_CONCURRENCY", 50, "requests in flight")
		s.Int(&workers, "workers", "PACER_LOAD_WORKERS", 2, "workers draining the queue")
		s.Bool(&overlap, "overlap", "PACER_LOAD_OVERLAP", false, "run the workers during ingest")
	}); err != nil {
		b.Fatal(err)
	}
	n, conc, workers = max(n, 1), max(conc, 1), max(workers, 1)
	ctx := context.Background()
	env := asynceventtest.New(b, asynceventtest.Options{})
	v, err := auth.NewVerifier(ctx, auth.Config{HS256Secret: secret})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- asynceventapi.Run(sctx, asynceventapi.Config{
			Config: asynceventbackend.Config{Table: env.DDB.Table.Name(), Queue: env.QueueName,
				DynamoDB: env.Dynamo, SQS: env.SQS, CursorKey: []byte("load-test-cursor-key-0123456789abcdef")},
			Listener: l, Verifier: v,
		})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Errorf("api: %v", err)
		}
	}()
	base := "http://" + l.Addr().String()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "load", EventType: asyncevent.FirstCome, Capacity: int64(n / 5)}); err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i], _ = auth.Mint(secret, auth.Principal{UserID: fmt.Sprintf("load%06d", i)}, time.Hour)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}, Timeout: 30 * time.Second}
	post := func(i int) (time.Duration, error) {
		req, _ := http.NewRequest(http.MethodPost, base+"/events/load/participations", nil)
		req.Header.Set("Authorization", "Bearer "+tokens[i])
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Since(t0), nil
	}
	if _, err := post(0); err != nil { // warm up: connection, EventConfig cache
		b.Fatal(err)
	}
	startWorkers := func() { env.StartWorkers(b, workers, consumer.Config{Concurrency: 10, Wait: time.Second}) }
	if overlap {
		startWorkers()
	}
	env.Calls.Reset()

	b.ResetTimer()
	lat := make([]time.Duration, n-1)
	start := time.Now()
	runParallel(n-1, conc, func(i int) {
		d, err := post(i + 1)
		if err != nil {
			b.Error(err)
		}
		lat[i] = d
	})
	ingest := time.Since(start)
	calls := env.Calls.String()
	drainStart := time.Now()
	if !overlap {
		startWorkers()
	}
	asynceventtest.Eventually(b, 5*time.Minute, "every request decided", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "load")
		if err != nil {
			return false, err
		}
		return st.ByStatus[asyncevent.StatusSucceeded]+st.ByStatus[asyncevent.StatusRejected] == n, nil
	})
	drain := time.Since(drainStart)
	b.StopTimer()
	st, _ := env.Admin.EventStats(ctx, "load")

	// The stand-in's raw PutItem rate, same concurrency, same table.
	put := func(i int) {
		_, err := env.DDB.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.DDB.Table.Name()), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "BENCH#" + strconv.Itoa(i)}, "SK": &types.AttributeValueMemberS{Value: "X"},
			"v": &types.AttributeValueMemberS{Value: "payload"},
		}})
		if err != nil {
			b.Error(err)
		}
	}
	t0 := time.Now()
	runParallel(n, conc, put)
	putRate := float64(n) / time.Since(t0).Seconds()

	// For context: the stand-ins' raw rates for the calls ingest makes, a
	// 3-item TransactWriteItems and a SendMessage.
	tx := func(i int) {
		item := func(pk string) types.TransactWriteItem {
			return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(env.DDB.Table.Name()), Item: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "X"}}}}
		}
		_, err := env.DDB.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			item("TXA#" + strconv.Itoa(i)), item("TXB#" + strconv.Itoa(i)), item("TXC#" + strconv.Itoa(i))}})
		if err != nil {
			b.Error(err)
		}
	}
	t0 = time.Now()
	runParallel(n, conc, tx)
	txRate := float64(n) / time.Since(t0).Seconds()
	t0 = time.Now()
	runParallel(n, conc, func(i int) {
		if err := env.Queue.Send(ctx, "bench"); err != nil {
			b.Error(err)
		}
	})
	sendRate := float64(n) / time.Since(t0).Seconds()
	b.ReportMetric(txRate, "rawTx3/s")
	b.ReportMetric(sendRate, "rawSend/s")

	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	rate := float64(len(lat)) / ingest.Seconds()
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(rate, "ingest/s")
	b.ReportMetric(drain.Seconds(), "drain-s")
	b.ReportMetric(putRate, "rawPut/s")
	b.ReportMetric(rate/(putRate/3), "ratio")
	b.Logf("%d participants, %d concurrent, %d workers (overlapping ingest: %v): ingest p50 %.1f ms, p95 %.1f ms, p99 %.1f ms; %.0f req/s over %s; queue drained and all decided %s after ingest ended; raw PutItem %.0f/s → %.0f ingests/s allowed at 3 calls each; ratio %.2f",
		n, conc, workers, overlap, pct(0.5), pct(0.95), pct(0.99), rate, ingest.Round(time.Millisecond), drain.Round(time.Millisecond), putRate, putRate/3, rate/(putRate/3))
	b.Logf("calls during ingest: %s", calls)
	b.Logf("for context, same concurrency: raw 3-item TransactWriteItems %.0f/s, raw SendMessage %.0f/s; an ingest needs 2 transactions and 1 send, so these calls alone allow about %.0f ingests/s",
		txRate, sendRate, 1/(2/txRate+1/sendRate))
	b.Logf("outcome: %v, invariant ok: %v, remaining %d", st.ByResultCode, st.InvariantOK, st.CapacityRemaining)
	if !st.InvariantOK || st.ByStatus[asyncevent.StatusSucceeded] != n/5 {
		b.Fatalf("stats %+v", st)
	}
}

// runParallel calls f(0..n-1) with at most conc at once.
func runParallel(n, conc int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range conc {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
