package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// Checkpoint is how far a consumer has read one shard.
type Checkpoint struct {
	// Sequence is the sequence number of the last record handled ("" if
	// none yet).
	Sequence string
	// Closed says the shard was read to its end: it is never read again,
	// and its children may be read.
	Closed bool
}

// Checkpoints stores consumers' checkpoints, per consumer name and shard.
type Checkpoints interface {
	// Load returns every checkpoint saved for consumer, by shard id.
	Load(ctx context.Context, consumer string) (map[string]Checkpoint, error)
	// Save stores the checkpoint of consumer on shard.
	Save(ctx context.Context, consumer, shard string, cp Checkpoint) error
}

// CheckpointSchema is the schema of a checkpoint table: PK
// CONSUMER#<name>, SK SHARD#<shardId>, and a TTL so that checkpoints of
// shards long gone (streams keep records for 24 hours) expire.
var CheckpointSchema = ddb.Schema{PK: "PK", SK: "SK", TTLAttribute: "ttl"}

// checkpointTTL is how long a checkpoint outlives its last save: a shard
// is read for at most a few hours and its records are kept 24 hours.
const checkpointTTL = 7 * 24 * time.Hour

type checkpointItem struct {
	Consumer  string `dynamodbav:"consumer"`
	Shard     string `dynamodbav:"shard"`
	Sequence  string `dynamodbav:"sequence,omitempty"`
	Closed    bool   `dynamodbav:"closed,omitempty"`
	UpdatedAt int64  `dynamodbav:"updatedAt"`
	TTL       int64  `dynamodbav:"ttl"`
}

var (
	consumerPK = ddb.MustFormat("CONSUMER#{consumer}")
	shardSK    = ddb.MustFormat("SHARD#{shard}")
)

// DynamoCheckpoints stores checkpoints in a DynamoDB table of
// CheckpointSchema.
type DynamoCheckpoints struct {
	table *ddb.Table
	items *ddb.Entity[checkpointItem]
}

var _ Checkpoints = (*DynamoCheckpoints)(nil)

// NewDynamoCheckpoints returns a store on the named table of db (create it
// with Ensure).
func NewDynamoCheckpoints(db *ddb.DB, table string) *DynamoCheckpoints {
	t := db.Table(table, &CheckpointSchema)
	return &DynamoCheckpoints{table: t, items: ddb.NewEntity(t, "STREAM_CHECKPOINT", func(c *checkpointItem) ddb.Key {
		return ddb.Key{PK: consumerPK.Build(c.Consumer), SK: shardSK.Build(c.Shard)}
	})}
}

// Ensure creates the checkpoint table if it is missing.
func (s *DynamoCheckpoints) Ensure(ctx context.Context) error { return s.table.Ensure(ctx) }

// Load implements Checkpoints, with a strongly consistent read.
func (s *DynamoCheckpoints) Load(ctx context.Context, consumer string) (map[string]Checkpoint, error) {
	out := map[string]Checkpoint{}
	for it, err := range s.items.Query("", consumerPK.Build(consumer)).Consistent().All(ctx) {
		if err != nil {
			return nil, fmt.Errorf("stream: load checkpoints: %w", err)
		}
		out[it.Shard] = Checkpoint{Sequence: it.Sequence, Closed: it.Closed}
	}
	return out, nil
}

// Save implements Checkpoints.
func (s *DynamoCheckpoints) Save(ctx context.Context, consumer, shard string, cp Checkpoint) error {
	now := time.Now()
	err := s.items.Put(&checkpointItem{
		Consumer: consumer, Shard: shard, Sequence: cp.Sequence, Closed: cp.Closed,
		UpdatedAt: now.UnixMilli(), TTL: now.Add(checkpointTTL).Unix(),
	}).Run(ctx)
	if err != nil {
		return fmt.Errorf("stream: save checkpoint: %w", err)
	}
	return nil
}
