package stream_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/pacerhq/pacer/sdk/ddb/stream"
)

// fakeStreams serves closed shards, each with one batch of records; an
// iterator after a trimmed sequence number is refused.
type fakeStreams struct {
	shards  []streamtypes.Shard
	records map[string][]string // shard → sequence numbers
	trimmed string              // sequence number whose successors are trimmed
	bad     map[string]bool     // sequence numbers served undecodable
}

func (f *fakeStreams) DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: &streamtypes.StreamDescription{Shards: f.shards}}, nil
}

func (f *fakeStreams) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	if in.ShardIteratorType == streamtypes.ShardIteratorTypeAfterSequenceNumber && aws.ToString(in.SequenceNumber) == f.trimmed {
		return nil, &streamtypes.TrimmedDataAccessException{Message: aws.String("trimmed")}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: in.ShardId}, nil
}

func (f *fakeStreams) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	var recs []streamtypes.Record
	for _, seq := range f.records[aws.ToString(in.ShardIterator)] {
		rec := streamtypes.Record{EventName: streamtypes.OperationTypeInsert, Dynamodb: &streamtypes.StreamRecord{SequenceNumber: aws.String(seq)}}
		if f.bad[seq] {
			rec.Dynamodb.Keys = map[string]streamtypes.AttributeValue{"PK": &streamtypes.UnknownUnionMember{Tag: "X"}}
		}
		recs = append(recs, rec)
	}
	return &dynamodbstreams.GetRecordsOutput{Records: recs}, nil // NextShardIterator nil: the shard is closed
}

// memCheckpoints keeps checkpoints in memory.
type memCheckpoints struct {
	mu  sync.Mutex
	cps map[string]stream.Checkpoint
}

func (m *memCheckpoints) Load(context.Context, string) (map[string]stream.Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]stream.Checkpoint{}
	for k, v := range m.cps {
		out[k] = v
	}
	return out, nil
}

func (m *memCheckpoints) Save(_ context.Context, _, shard string, cp stream.Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cps[shard] = cp
	return nil
}

// A child shard is read only after its parent is read to its end, and a
// checkpoint whose successors were trimmed restarts at the shard's oldest
// record instead of failing for ever.
func TestParentsFirstAndTrimmedCheckpoint(t *testing.T) {
	t.Parallel()
	f := &fakeStreams{
		// The child is listed first: order in the list must not matter.
		shards: []streamtypes.Shard{
			{ShardId: aws.String("child"), ParentShardId: aws.String("parent")},
			{ShardId: aws.String("parent")},
		},
		records: map[string][]string{"parent": {"1", "2"}, "child": {"3"}},
		trimmed: "0",
	}
	cps := &memCheckpoints{cps: map[string]stream.Checkpoint{"parent": {Sequence: "0"}}}
	ctx, cancel := context.WithCancel(context.Background())
	r := runFake(ctx, f, cps)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, _ := cps.Load(ctx, "c")
		if c["child"].Closed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child shard was not read to its end; checkpoints %v", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	seen := r.stop(t)
	if got := len(seen); got != 3 || seen[0] != "parent:1" || seen[1] != "parent:2" || seen[2] != "child:3" {
		t.Fatalf("records handled in the order %v, want parent:1 parent:2 child:3", seen)
	}
}

// Undecodable records are skipped for good: the checkpoint passes them,
// a page of nothing else included (which used to index an empty batch and
// panic), and the handler sees only the records that decode.
func TestUndecodableRecordsAreSkipped(t *testing.T) {
	t.Parallel()
	f := &fakeStreams{
		shards:  []streamtypes.Shard{{ShardId: aws.String("mixed")}, {ShardId: aws.String("bad")}},
		records: map[string][]string{"mixed": {"1", "2"}, "bad": {"3", "4"}},
		bad:     map[string]bool{"2": true, "3": true, "4": true},
	}
	cps := &memCheckpoints{cps: map[string]stream.Checkpoint{}}
	ctx, cancel := context.WithCancel(context.Background())
	r := runFake(ctx, f, cps)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, _ := cps.Load(ctx, "c")
		if c["mixed"].Closed && c["bad"].Closed {
			if c["mixed"].Sequence != "2" || c["bad"].Sequence != "4" {
				t.Errorf("checkpoints %v: want each past its shard's last record", c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shards were not read to their ends; checkpoints %v", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	seen := r.stop(t)
	if len(seen) != 1 || seen[0] != "mixed:1" {
		t.Fatalf("handled %v, want only mixed:1", seen)
	}
}

// fakeRun is stream.Run over a fake, recording each handled record as
// shard:sequence.
type fakeRun struct {
	mu   sync.Mutex
	seen []string
	done chan error
}

// runFake starts stream.Run on f with checkpoints cps until ctx ends.
func runFake(ctx context.Context, f *fakeStreams, cps *memCheckpoints) *fakeRun {
	r := &fakeRun{done: make(chan error, 1)}
	go func() {
		r.done <- stream.Run(ctx, f, stream.Config{Name: "c", StreamARN: "arn", Checkpoints: cps, Poll: time.Millisecond, Discover: time.Hour},
			func(_ context.Context, batch []stream.Record) error {
				r.mu.Lock()
				defer r.mu.Unlock()
				for _, rec := range batch {
					r.seen = append(r.seen, rec.ShardID+":"+rec.SequenceNumber)
				}
				return nil
			})
	}()
	return r
}

// stop waits for Run to return (its context cancelled) and returns what
// it handled.
func (r *fakeRun) stop(t *testing.T) []string {
	t.Helper()
	if err := <-r.done; err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}
