package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/cenkalti/backoff/v5"
)

// Client is the subset of *dynamodbstreams.Client that Run uses.
type Client interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ Client = (*dynamodbstreams.Client)(nil)

// Handler handles one batch of records of one shard, in stream order. Run
// calls it from one goroutine per shard, so batches of different shards
// may be handled at once. An error makes Run call it again with the same
// batch (after a backoff); nothing after the batch is read meanwhile.
type Handler func(ctx context.Context, batch []Record) error

// Config configures Run.
type Config struct {
	// Name names the consumer; its checkpoints are saved under it.
	Name string
	// StreamARN is the stream to read (ddb's DescribeTable gives a table's
	// LatestStreamArn).
	StreamARN string
	// Checkpoints stores how far each shard has been handled.
	Checkpoints Checkpoints
	// Limit is the most records per GetRecords (default and maximum 1000).
	Limit int32
	// Poll is the wait before reading an open shard again after an empty
	// read (default 1s; AWS allows 5 GetRecords per second per shard).
	Poll time.Duration
	// Discover is how often the shard list is read again, for new shards
	// (default 10s; also whenever a shard ends).
	Discover time.Duration
	// FromLatest starts a shard that has no checkpoint at its newest
	// record instead of its oldest (TRIM_HORIZON, the default, which reads
	// the last 24 hours).
	FromLatest bool
	// Log receives handler retries and shard changes (default slog.Default).
	Log *slog.Logger
	// Progress, if set, hears after each read of a shard how far the
	// consumer has handled it (Progress). A reader that hangs or fails
	// stops reporting, so the time since a shard's Through is the
	// consumer's lag on it, the iterator age of a Lambda trigger. Called
	// from the shard's reader goroutine: keep it short.
	Progress func(Progress)
}

// Progress is how far a consumer has handled one shard.
type Progress struct {
	Shard string
	// Through is the time up to which every change of the shard is
	// handled and checkpointed: the approximate time of the last record
	// of the batch just handled, or when the read that found nothing new
	// was sent.
	Through time.Time
	// Ended: the shard is read to its end and will not be read again.
	Ended bool
}

// Run reads the stream until ctx is cancelled, then waits for the batches
// in hand to finish and returns nil. Failed AWS calls, handler errors and
// checkpoint writes are retried with backoff (and logged) for as long as it
// runs; only an incomplete Config is an error. Each batch is given to h and
// then checkpointed; see the package doc for the delivery guarantee.
func Run(ctx context.Context, client Client, cfg Config, h Handler) error {
	if cfg.Name == "" || cfg.StreamARN == "" || cfg.Checkpoints == nil {
		return errors.New("stream: Config needs Name, StreamARN and Checkpoints")
	}
	if cfg.Limit <= 0 || cfg.Limit > 1000 {
		cfg.Limit = 1000
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Discover <= 0 {
		cfg.Discover = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	r := &runner{client: client, cfg: cfg, h: h, running: map[string]bool{}, ended: make(chan string, 16)}
	return r.run(ctx)
}

type runner struct {
	client Client
	cfg    Config
	h      Handler

	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]bool // shards being read
	ended   chan string     // shards read to their end
}

func (r *runner) run(ctx context.Context) error {
	defer r.wg.Wait()
	tick := time.NewTicker(r.cfg.Discover)
	defer tick.Stop()
	for {
		if err := r.discover(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-r.ended:
		}
	}
}

// discover lists the shards and starts a reader for every shard that is
// not closed and whose parent is closed (or gone from the stream).
func (r *runner) discover(ctx context.Context) error {
	shards, err := retry(ctx, func() ([]streamtypes.Shard, error) { return r.shards(ctx) })
	if err != nil {
		return fmt.Errorf("stream: list shards: %w", err)
	}
	cps, err := retry(ctx, func() (map[string]Checkpoint, error) { return r.cfg.Checkpoints.Load(ctx, r.cfg.Name) })
	if err != nil {
		return err
	}
	listed := map[string]bool{}
	for _, s := range shards {
		listed[aws.ToString(s.ShardId)] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range shards {
		id, parent := aws.ToString(s.ShardId), aws.ToString(s.ParentShardId)
		if cps[id].Closed || r.running[id] {
			continue
		}
		if parent != "" && listed[parent] && !cps[parent].Closed {
			continue // its parent first
		}
		r.running[id] = true
		r.wg.Add(1)
		go r.read(ctx, id, cps[id])
	}
	return nil
}

// shards lists every shard of the stream.
func (r *runner) shards(ctx context.Context) ([]streamtypes.Shard, error) {
	var out []streamtypes.Shard
	var start *string
	for {
		d, err := r.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{
			StreamArn: aws.String(r.cfg.StreamARN), ExclusiveStartShardId: start,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, d.StreamDescription.Shards...)
		start = d.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return out, nil
		}
	}
}

// read reads one shard from cp until it ends or ctx is cancelled.
func (r *runner) read(ctx context.Context, shard string, cp Checkpoint) {
	defer r.wg.Done()
	defer func() {
		r.mu.Lock()
		delete(r.running, shard)
		r.mu.Unlock()
	}()
	log := r.cfg.Log.With("consumer", r.cfg.Name, "shard", shard)
	var it *string
	for ctx.Err() == nil {
		if it == nil {
			var err error
			it, err = retry(ctx, func() (*string, error) { return r.iterator(ctx, shard, cp.Sequence) })
			if err != nil {
				return
			}
		}
		sent := time.Now()
		out, err := r.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(r.cfg.Limit)})
		var expired *streamtypes.ExpiredIteratorException
		var trimmed *streamtypes.TrimmedDataAccessException
		switch {
		case errors.As(err, &expired):
			it = nil // a fresh one from the checkpoint
			continue
		case errors.As(err, &trimmed):
			// The iterator points at records the stream no longer keeps
			// (DynamoDB Local also answers so for a fresh, empty shard):
			// the same iterator would fail for ever. Take a fresh one from
			// the checkpoint, which falls back to the shard's oldest record
			// if the checkpoint itself was trimmed.
			if ctx.Err() == nil {
				log.Warn("stream: the shard iterator points at trimmed records; taking a fresh one", "err", err)
				sleep(ctx, r.cfg.Poll)
			}
			it = nil
			continue
		case err != nil:
			if ctx.Err() == nil {
				log.Warn("stream: GetRecords failed; retrying", "err", err)
				sleep(ctx, r.cfg.Poll)
			}
			continue
		}
		if len(out.Records) > 0 {
			batch := make([]Record, 0, len(out.Records))
			for _, in := range out.Records {
				rec, err := fromStream(shard, in)
				if err != nil {
					log.Error("stream: undecodable record", "err", err)
					continue
				}
				batch = append(batch, rec)
			}
			if len(batch) > 0 && !r.deliver(ctx, log, batch) {
				return
			}
			// The checkpoint passes the page's last record, decoded or not:
			// an undecodable record was logged and is skipped for good (a
			// page of nothing else used to index an empty batch).
			last := out.Records[len(out.Records)-1]
			if last.Dynamodb == nil || last.Dynamodb.SequenceNumber == nil {
				log.Error("stream: a record without a sequence number; the checkpoint stays", "shard", shard)
				continue
			}
			cp.Sequence = *last.Dynamodb.SequenceNumber
			if !r.save(ctx, log, shard, cp) {
				return
			}
			if len(batch) > 0 {
				r.progress(Progress{Shard: shard, Through: batch[len(batch)-1].At})
			}
		} else {
			r.progress(Progress{Shard: shard, Through: sent})
		}
		it = out.NextShardIterator
		if it == nil { // the shard is closed and read to its end
			cp.Closed = true
			if r.save(ctx, log, shard, cp) {
				r.progress(Progress{Shard: shard, Through: sent, Ended: true})
				log.Info("stream: shard ended")
				select {
				case r.ended <- shard:
				default:
				}
			}
			return
		}
		if len(out.Records) == 0 {
			sleep(ctx, r.cfg.Poll)
		}
	}
}

func (r *runner) progress(p Progress) {
	if r.cfg.Progress != nil {
		r.cfg.Progress(p)
	}
}

// iterator returns an iterator after seq, or at the shard's start (or
// newest record) when seq is "".
func (r *runner) iterator(ctx context.Context, shard, seq string) (*string, error) {
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(r.cfg.StreamARN), ShardId: aws.String(shard)}
	switch {
	case seq != "":
		in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(seq)
	case r.cfg.FromLatest:
		in.ShardIteratorType = streamtypes.ShardIteratorTypeLatest
	default:
		in.ShardIteratorType = streamtypes.ShardIteratorTypeTrimHorizon
	}
	out, err := r.client.GetShardIterator(ctx, in)
	var trimmed *streamtypes.TrimmedDataAccessException
	if errors.As(err, &trimmed) && seq != "" {
		// The checkpoint is older than the stream keeps (24 hours): what
		// lay between is gone. Say so, and read what is left.
		r.cfg.Log.Error("stream: records after the checkpoint were trimmed; some changes were never handled",
			"consumer", r.cfg.Name, "shard", shard, "checkpoint", seq)
		in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeTrimHorizon, nil
		out, err = r.client.GetShardIterator(ctx, in)
	}
	if err != nil {
		return nil, err
	}
	return out.ShardIterator, nil
}

// deliver calls the handler until it succeeds; false when ctx ends first.
func (r *runner) deliver(ctx context.Context, log *slog.Logger, batch []Record) bool {
	_, err := retry(ctx, func() (struct{}, error) {
		err := r.h(ctx, batch)
		if err != nil && ctx.Err() == nil {
			log.Warn("stream: handler failed; the batch will be delivered again", "records", len(batch), "err", err)
		}
		return struct{}{}, err
	})
	return err == nil
}

// save saves cp until it succeeds, or ctx ends and an attempt failed.
// Each attempt runs on a context of its own (10 s), not cancelled with ctx:
// a batch handled just as the consumer stops is still checkpointed, so that
// a graceful stop does not deliver it again. False when it was not saved.
func (r *runner) save(ctx context.Context, log *slog.Logger, shard string, cp Checkpoint) bool {
	_, err := retry(ctx, func() (struct{}, error) {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err := r.cfg.Checkpoints.Save(actx, r.cfg.Name, shard, cp)
		if err != nil && ctx.Err() == nil {
			log.Warn("stream: saving checkpoint failed; retrying", "err", err)
		}
		return struct{}{}, err
	})
	return err == nil
}

// retry calls op with exponential backoff (100 ms doubling to 10 s, with
// jitter) until it succeeds or ctx ends.
func retry[T any](ctx context.Context, op func() (T, error)) (T, error) {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = 100*time.Millisecond, 10*time.Second
	return backoff.Retry(ctx, op, backoff.WithBackOff(b), backoff.WithMaxElapsedTime(0), backoff.WithMaxTries(0))
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
