package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// ReplicaSchema is the schema of the replicas table: PK GROUP#<group>
// (one API's replicas), SK REPLICA#<id>, and a TTL that removes the items
// of replicas long gone.
var ReplicaSchema = ddb.Schema{PK: "PK", SK: "SK", TTLAttribute: "ttl"}

// replicaTTL is how long DynamoDB keeps a replica's last item: TTL deletes
// lazily, so the count reads expiresAt, not whether the item is there.
const replicaTTL = time.Hour

type replicaItem struct {
	Group     string `dynamodbav:"group"`
	ID        string `dynamodbav:"replica"`
	ExpiresAt int64  `dynamodbav:"expiresAt"` // epoch ms
	TTL       int64  `dynamodbav:"ttl"`
}

var (
	groupPK   = ddb.MustFormat("GROUP#{group}")
	replicaSK = ddb.MustFormat("REPLICA#{replica}")
)

// ReplicasConfig configures Replicas.
type ReplicasConfig struct {
	// Table is the replicas table (ReplicaSchema).
	Table *ddb.Table
	// Group names the replicas that share budgets (the binary's name); ID
	// is this replica's, unique among them.
	Group, ID string
	// Every is how often a replica says it is alive and counts the
	// others (default DefaultReplicaEvery); a replica not heard from for
	// Expiry (default 3 × Every) no longer counts.
	Every, Expiry time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives a failed beat (default slog.Default()).
	Log *slog.Logger
}

// DefaultReplicaEvery is how often a replica beats by default: a replica
// that starts counts itself and every live peer at once, and the others
// count it within this, so during a scale-out the replicas allow at most
// twice a budget for at most this long (docs/ratelimit.md).
const DefaultReplicaEvery = 10 * time.Second

// Replicas counts the live replicas of a group: each replica puts an item
// saying until when it is alive and counts the group's items still alive.
// One PutItem and one Query a replica every Every. Count is the last count;
// if a beat fails, the last count stays (and the error is logged), so an
// outage of the table freezes the shares rather than dropping them.
type Replicas struct {
	cfg   ReplicasConfig
	items *ddb.Entity[replicaItem]
	count atomic.Int64
}

// NewReplicas returns the counter of cfg's group; it counts 1 (itself)
// until its first Beat.
func NewReplicas(cfg ReplicasConfig) *Replicas {
	if cfg.Every <= 0 {
		cfg.Every = DefaultReplicaEvery
	}
	if cfg.Expiry <= 0 {
		cfg.Expiry = 3 * cfg.Every
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	r := &Replicas{cfg: cfg, items: ddb.NewEntity(cfg.Table, "RATE_REPLICA", func(it *replicaItem) ddb.Key {
		return ddb.Key{PK: groupPK.Build(it.Group), SK: replicaSK.Build(it.ID)}
	})}
	r.count.Store(1)
	return r
}

// Count is the live replicas last counted, at least 1.
func (r *Replicas) Count() int { return int(r.count.Load()) }

// Beat says this replica is alive until Expiry from now and counts the
// group's replicas alive now (a strongly consistent Query of the group).
func (r *Replicas) Beat(ctx context.Context) error {
	now := r.cfg.Now()
	err := r.items.Put(&replicaItem{Group: r.cfg.Group, ID: r.cfg.ID,
		ExpiresAt: now.Add(r.cfg.Expiry).UnixMilli(), TTL: now.Add(replicaTTL).Unix()}).Run(ctx)
	if err != nil {
		return fmt.Errorf("ratelimit: replicas: %w", err)
	}
	n := 0
	alive := expression.Name("expiresAt").GreaterThan(expression.Value(now.UnixMilli()))
	for _, err := range r.items.Query("", groupPK.Build(r.cfg.Group)).Consistent().Filter(alive).All(ctx) {
		if err != nil {
			return fmt.Errorf("ratelimit: replicas: %w", err)
		}
		n++
	}
	r.count.Store(int64(max(n, 1)))
	return nil
}

// Run beats every Every until ctx ends.
func (r *Replicas) Run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.Beat(ctx); err != nil && ctx.Err() == nil {
				r.cfg.Log.Warn("rate limits: counting the replicas failed; keeping the last count", "count", r.Count(), "err", err)
			}
		}
	}
}
