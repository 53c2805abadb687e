package stream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
)

var schema = ddb.Schema{PK: "PK", SK: "SK", Stream: types.StreamViewTypeNewAndOldImages}

type counter struct {
	ID string `dynamodbav:"id"`
	N  int    `dynamodbav:"n"`
}

// fixture is a streamed table with a counter entity, a checkpoint table
// and a stream client.
type fixture struct {
	env      *ddbtest.Env
	counters *ddb.Entity[counter]
	cps      *stream.DynamoCheckpoints
	client   stream.Client
	arn      string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	env := ddbtest.New(t, &schema)
	ctx := context.Background()
	arn, err := env.Table.StreamARN(ctx)
	if err != nil || arn == "" {
		t.Fatalf("stream ARN %q: %v", arn, err)
	}
	cps := stream.NewDynamoCheckpoints(env.DB, ddbtest.TableName(t)+"-cp")
	if err := cps.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	return &fixture{
		env: env, cps: cps, client: stream.NewClient(env.Config), arn: arn,
		counters: ddb.NewEntity(env.Table, "COUNTER", func(c *counter) ddb.Key { return ddb.Key{PK: "C#" + c.ID, SK: "META"} }),
	}
}

func (f *fixture) put(t *testing.T, id string, n int) {
	t.Helper()
	if err := f.counters.Put(&counter{ID: id, N: n}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// seen collects the records a consumer handled.
type seen struct {
	mu   sync.Mutex
	recs []stream.Record
	more chan struct{}
}

func newSeen() *seen { return &seen{more: make(chan struct{}, 1000)} }

func (s *seen) handle(_ context.Context, batch []stream.Record) error {
	s.mu.Lock()
	s.recs = append(s.recs, batch...)
	s.mu.Unlock()
	s.more <- struct{}{}
	return nil
}

// waitFor waits (up to 30 s) until at least n records were handled.
func (s *seen) waitFor(t *testing.T, n int) []stream.Record {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		s.mu.Lock()
		got := append([]stream.Record(nil), s.recs...)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-s.more:
		case <-deadline:
			t.Fatalf("handled %d records, want %d", len(got), n)
		}
	}
}

// start runs a consumer until the returned stop is called.
func (f *fixture) start(t *testing.T, name string, h stream.Handler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- stream.Run(ctx, f.client, stream.Config{
			Name: name, StreamARN: f.arn, Checkpoints: f.cps, Poll: 50 * time.Millisecond,
		}, h)
	}()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	}
}

// Records come in order with their old and new images decoded, and a
// restarted consumer resumes after its checkpoint: it sees only what was
// written since.
func TestRunDecodesInOrderAndResumes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.put(t, "a", 1)
	f.put(t, "a", 2)
	f.put(t, "b", 1)

	s := newSeen()
	stop := f.start(t, "c1", s.handle)
	got := s.waitFor(t, 3)
	stop()
	if len(got) != 3 {
		t.Fatalf("got %d records, want 3", len(got))
	}
	var first, second counter
	if ok, err := got[1].DecodeNew(&second); !ok || err != nil || second.N != 2 {
		t.Fatalf("record 1 new image: %+v %v %v", second, ok, err)
	}
	if ok, err := got[1].DecodeOld(&first); !ok || err != nil || first.N != 1 {
		t.Fatalf("record 1 old image: %+v %v %v", first, ok, err)
	}
	if got[0].Kind != stream.Insert || got[1].Kind != stream.Modify || got[1].String("entityType") != "COUNTER" {
		t.Fatalf("kinds %s %s, entity %q", got[0].Kind, got[1].Kind, got[1].String("entityType"))
	}
	if ok, _ := got[0].DecodeOld(&first); ok {
		t.Fatal("an insert has an old image")
	}

	f.put(t, "c", 7)
	s2 := newSeen()
	stop = f.start(t, "c1", s2.handle)
	got = s2.waitFor(t, 1)
	stop()
	var c counter
	if _, err := got[0].DecodeNew(&c); err != nil || c.ID != "c" || len(got) != 1 {
		t.Fatalf("after restart: %d records, first %+v (%v); want only c", len(got), c, err)
	}

	// Another consumer name has its own checkpoints: it reads everything.
	s3 := newSeen()
	stop = f.start(t, "c2", s3.handle)
	s3.waitFor(t, 4)
	stop()
}

// A failing handler gets the same batch again, and nothing is
// checkpointed until it succeeds: at-least-once.
func TestRunRedeliversUntilHandled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 5 {
		f.put(t, fmt.Sprint(i), i)
	}
	var mu sync.Mutex
	fails := 2
	var calls [][]string
	s := newSeen()
	stop := f.start(t, "flaky", func(ctx context.Context, batch []stream.Record) error {
		mu.Lock()
		var seqs []string
		for _, r := range batch {
			seqs = append(seqs, r.SequenceNumber)
		}
		calls = append(calls, seqs)
		fail := fails > 0
		fails--
		mu.Unlock()
		if fail {
			return errors.New("sink down")
		}
		return s.handle(ctx, batch)
	})
	s.waitFor(t, 5)
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(calls) < 3 || fmt.Sprint(calls[0]) != fmt.Sprint(calls[1]) || fmt.Sprint(calls[1]) != fmt.Sprint(calls[2]) {
		t.Fatalf("the failed batch was not delivered again unchanged: %v", calls)
	}
	cps, err := f.cps.Load(context.Background(), "flaky")
	if err != nil {
		t.Fatal(err)
	}
	last := calls[len(calls)-1]
	found := false
	for _, cp := range cps {
		found = found || cp.Sequence == last[len(last)-1]
	}
	if !found {
		t.Fatalf("checkpoints %v do not hold the last handled sequence %s", cps, last[len(last)-1])
	}
}

// trimmingClient answers TrimmedDataAccessException to every GetRecords
// with the first shard iterator it sees, as DynamoDB Local does for an
// iterator it has trimmed, and passes everything else to the real client.
type trimmingClient struct {
	stream.Client
	mu      sync.Mutex
	first   string
	refused int
}

func (c *trimmingClient) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	c.mu.Lock()
	if c.first == "" {
		c.first = aws.ToString(in.ShardIterator)
	}
	bad := aws.ToString(in.ShardIterator) == c.first
	if bad {
		c.refused++
	}
	c.mu.Unlock()
	if bad {
		return nil, &streamtypes.TrimmedDataAccessException{Message: aws.String("injected: trimmed")}
	}
	return c.Client.GetRecords(ctx, in, opts...)
}

// A shard iterator answered TrimmedDataAccessException is replaced, not
// retried for ever: every record is still handled.
func TestRunReplacesATrimmedIterator(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tc := &trimmingClient{Client: f.client}
	f.client = tc
	for i := range 3 {
		f.put(t, fmt.Sprint(i), i)
	}
	s := newSeen()
	stop := f.start(t, "trimmed", s.handle)
	s.waitFor(t, 3)
	stop()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.refused != 1 {
		t.Fatalf("the trimmed iterator was tried %d times, want once", tc.refused)
	}
}
