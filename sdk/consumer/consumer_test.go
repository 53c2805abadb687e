package consumer_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) { standin.RunTests(m, standin.Config{SQS: true}) }

// queue is a consumer.Source on a real (local) SQS queue.
type queue struct {
	c        *sqs.Client
	url      string
	receives atomic.Int64
}

func newQueue(t testing.TB, name string) *queue {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := sqs.NewFromConfig(cfg)
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("%s-%d", name, time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	return &queue{c: c, url: *out.QueueUrl}
}

func (q *queue) Receive(ctx context.Context, max int, wait, visibility time.Duration) ([]consumer.Message, error) {
	q.receives.Add(1)
	out, err := q.c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &q.url, MaxNumberOfMessages: int32(max),
		WaitTimeSeconds: int32(wait / time.Second), VisibilityTimeout: int32(visibility / time.Second)})
	if err != nil {
		return nil, err
	}
	ms := make([]consumer.Message, len(out.Messages))
	for i, m := range out.Messages {
		ms[i] = consumer.Message{ID: *m.MessageId, Body: *m.Body, ReceiptHandle: *m.ReceiptHandle, ReceiveCount: 1}
	}
	return ms, nil
}

func (q *queue) Delete(ctx context.Context, handles []string) error {
	es := make([]types.DeleteMessageBatchRequestEntry, len(handles))
	for i, h := range handles {
		es[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	_, err := q.c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &q.url, Entries: es})
	return err
}

// fill sends n messages in batches of 10.
func (q *queue) fill(t testing.TB, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for b := 0; b < n; b += 10 {
		wg.Go(func() {
			es := make([]types.SendMessageBatchRequestEntry, 0, 10)
			for i := b; i < min(n, b+10); i++ {
				es = append(es, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i - b)), MessageBody: aws.String(strconv.Itoa(i))})
			}
			if _, err := q.c.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: &q.url, Entries: es}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// drain runs the consumer on q until n messages were handled, each taking
// work, and returns the time it took.
func drain(t testing.TB, q *queue, n int, work time.Duration, cfg consumer.Config) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var handled atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	var took time.Duration
	errc := make(chan error, 1)
	go func() {
		errc <- consumer.Run(ctx, q, func(ctx context.Context, m consumer.Message) bool {
			time.Sleep(work)
			if handled.Add(1) == int64(n) {
				took = time.Since(start)
				close(done)
			}
			return true
		}, cfg)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("handled %d of %d in 2 minutes", handled.Load(), n)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return took
}

// plainDrain is the baseline: conc goroutines, each receiving up to 10
// messages and handling them one after another, then deleting them.
func plainDrain(t testing.TB, q *queue, n, conc int, work time.Duration) time.Duration {
	t.Helper()
	var handled atomic.Int64
	start := time.Now()
	var took atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for handled.Load() < int64(n) {
				ms, err := q.Receive(context.Background(), 10, 0, 30*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				var hs []string
				for _, m := range ms {
					time.Sleep(work)
					if handled.Add(1) == int64(n) {
						took.Store(int64(time.Since(start)))
					}
					hs = append(hs, m.ReceiptHandle)
				}
				if len(hs) > 0 {
					if err := q.Delete(context.Background(), hs); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	return time.Duration(took.Load())
}

// BenchmarkDrain drains a backlog of 1000 messages, each handled in 20 ms,
// at concurrency 10 (the worker's default) through the consumer and
// through the plain loop, on the local SQS stand-in, and reports both
// rates and their ratio (consumer / plain).
//
//	go test -run '^$' -bench Drain -benchtime 3x ./sdk/consumer/
func BenchmarkDrain(b *testing.B) {
	const n, conc, work = 1000, 10, 20 * time.Millisecond
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var cons, plain time.Duration
	var receives int64
	for b.Loop() {
		q := newQueue(b, "bench-consumer")
		q.fill(b, n+100) // more than n: the local server holds a receive
		// until it can fill it or its wait ends, which would add a second
		// to the consumer's last receive; the plain loop does not wait
		cons += drain(b, q, n, work, consumer.Config{Concurrency: conc, Batch: 10, Wait: time.Second, Log: log})
		receives += q.receives.Load()
		p := newQueue(b, "bench-plain")
		p.fill(b, n+100)
		plain += plainDrain(b, p, n, conc, work)
	}
	rc := float64(n*b.N) / cons.Seconds()
	rp := float64(n*b.N) / plain.Seconds()
	b.ReportMetric(rc, "consumer-msgs/s")
	b.ReportMetric(rp, "plain-msgs/s")
	b.ReportMetric(rc/rp, "ratio")
	b.ReportMetric(float64(receives)/float64(n*b.N), "receives/msg")
}

// slowSource hands out n messages, each Receive taking rtt: a queue far
// away. It stands for the receive round trip only; the rate against real
// SQS is BenchmarkDrain's.
type slowSource struct {
	mu       sync.Mutex
	next, n  int
	rtt      time.Duration
	receives int
}

func (s *slowSource) Receive(ctx context.Context, max int, _, _ time.Duration) ([]consumer.Message, error) {
	time.Sleep(s.rtt)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.receives++
	var ms []consumer.Message
	for ; s.next < s.n && len(ms) < max; s.next++ {
		ms = append(ms, consumer.Message{ID: strconv.Itoa(s.next), ReceiptHandle: strconv.Itoa(s.next)})
	}
	return ms, nil
}

func (s *slowSource) Delete(context.Context, []string) error { return nil }

// TestReceiveIsNotOnTheMessagePath: with a receive round trip longer than
// a handler, a consumer that receives only for the slots just freed spends
// a round trip per few messages ((rtt+work)/conc per message at best);
// receiving ahead keeps the handlers busy, so draining takes about
// n*work/conc. The bound sits between the two.
func TestReceiveIsNotOnTheMessagePath(t *testing.T) {
	const n, conc, work, rtt = 200, 4, 20 * time.Millisecond, 80 * time.Millisecond
	src := &slowSource{n: n, rtt: rtt}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var handled atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	go consumer.Run(ctx, src, func(context.Context, consumer.Message) bool { //nolint:errcheck // Run returns nil
		time.Sleep(work)
		if handled.Add(1) == n {
			close(done)
		}
		return true
	}, consumer.Config{Concurrency: conc, Batch: 10, Wait: time.Second, Log: log})
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("handled %d of %d in a minute", handled.Load(), n)
	}
	took := time.Since(start)
	ideal := time.Duration(n/conc) * work             // 1 s
	bound := time.Duration(n/conc) * (rtt + work) / 2 // half the receive-bound time: 2.5 s
	src.mu.Lock()
	receives := src.receives
	src.mu.Unlock()
	t.Logf("drained %d in %v (handler-bound %v, bound %v), %d receives", n, took, ideal, bound, receives)
	if took > bound {
		t.Errorf("draining %d took %v, over %v: the handlers waited for receives", n, took, bound)
	}
}
