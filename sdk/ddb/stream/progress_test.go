package stream_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/pacerhq/pacer/sdk/ddb/stream"
)

// openShard is one open shard that holds one record, changed at At, and
// then nothing new: its reads after the first are empty.
type openShard struct {
	At   time.Time
	mu   sync.Mutex
	read bool
}

func (f *openShard) DescribeStream(context.Context, *dynamodbstreams.DescribeStreamInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: &streamtypes.StreamDescription{Shards: []streamtypes.Shard{{ShardId: aws.String("s")}}}}, nil
}

func (f *openShard) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: in.ShardId}, nil
}

func (f *openShard) GetRecords(context.Context, *dynamodbstreams.GetRecordsInput, ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &dynamodbstreams.GetRecordsOutput{NextShardIterator: aws.String("s")}
	if !f.read {
		out.Records = []streamtypes.Record{{EventName: streamtypes.OperationTypeInsert, Dynamodb: &streamtypes.StreamRecord{
			SequenceNumber: aws.String("1"), ApproximateCreationDateTime: aws.Time(f.At),
		}}}
	}
	f.read = true
	return out, nil
}

// progressLog records what a consumer reports.
type progressLog struct {
	mu  sync.Mutex
	got []stream.Progress
}

func (p *progressLog) add(pr stream.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, pr)
}

func (p *progressLog) all() []stream.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]stream.Progress(nil), p.got...)
}

// runFor runs a consumer of client with handler h for d and returns what
// it reported.
func runFor(t *testing.T, client stream.Client, h stream.Handler, d time.Duration) []stream.Progress {
	t.Helper()
	var log progressLog
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	err := stream.Run(ctx, client, stream.Config{
		Name: "p", StreamARN: "arn", Checkpoints: &memCheckpoints{cps: map[string]stream.Checkpoint{}},
		Poll: 10 * time.Millisecond, Progress: log.add, Log: slog.New(slog.DiscardHandler),
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	return log.all()
}

// Progress says how far each shard is handled: through the batch's last
// change once it is handled, then through each empty read's start, so
// that an idle consumer that keeps reading is not behind; a shard read to
// its end says so.
func TestProgressFollowsTheReads(t *testing.T) {
	t.Parallel()
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	start := time.Now()
	got := runFor(t, &openShard{At: at}, func(context.Context, []stream.Record) error { return nil }, 300*time.Millisecond)
	if len(got) < 3 {
		t.Fatalf("progress %v: want the batch and then empty reads", got)
	}
	if got[0].Shard != "s" || !got[0].Through.Equal(at) || got[0].Ended {
		t.Errorf("after the batch: %+v, want shard s through %v", got[0], at)
	}
	for _, p := range got[1:] {
		if p.Through.Before(start) || p.Ended {
			t.Errorf("after an empty read: %+v, want through a time after the start %v", p, start)
		}
	}

	closed := &fakeStreams{shards: []streamtypes.Shard{{ShardId: aws.String("c")}}, records: map[string][]string{"c": {"1"}}}
	got = runFor(t, closed, func(context.Context, []stream.Record) error { return nil }, 300*time.Millisecond)
	if len(got) == 0 || !got[len(got)-1].Ended || got[len(got)-1].Shard != "c" {
		t.Errorf("a closed shard read to its end: progress %+v, want the last one Ended", got)
	}
}

// A handler that keeps failing holds its shard back: no progress is
// reported past what was handled, so the lag grows.
func TestProgressStopsWhileTheHandlerFails(t *testing.T) {
	t.Parallel()
	got := runFor(t, &openShard{At: time.Now()}, func(context.Context, []stream.Record) error { return errors.New("sink down") }, 300*time.Millisecond)
	if len(got) != 0 {
		t.Errorf("progress %+v while the only batch was never handled, want none", got)
	}
}
