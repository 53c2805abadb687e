package ddb

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Config tunes a DB. The zero value works.
type Config struct {
	// CursorKey seals pagination cursors (AES-256-GCM under a per-cursor
	// key derived with HKDF-SHA256 and a random salt): they are opaque and
	// cannot be forged or altered.
	// Use a secret of at least 32 bytes, shared by every instance that may
	// receive a cursor.
	// Empty means a random key per process: cursors then do not survive a
	// restart or cross instances.
	CursorKey []byte

	// Observer, if set, sees every call the SDK makes. The SDK then asks
	// DynamoDB for each call's consumed capacity (ReturnConsumedCapacity
	// TOTAL, reported in Call.Capacity) unless SkipConsumedCapacity.
	Observer Observer
	// SkipConsumedCapacity keeps an observed DB from asking for consumed
	// capacity (Call.Capacity is then 0). On AWS asking is free; DynamoDB
	// Local computes it inside the table-wide lock every write takes,
	// which cost its transactions about 14 % of their throughput.
	SkipConsumedCapacity bool

	// BatchRetries is how many times unprocessed batch items are retried
	// before a *BatchError is returned (default 8). Backoff between retries
	// is exponential with jitter, from BatchBackoff (default 25 ms) capped at
	// BatchBackoffMax (default 2 s).
	BatchRetries int
	// TxConflictRetries is how many times DB.Transact retries a
	// transaction cancelled only by TransactionConflict, and a single write
	// (Op.Run, Update.Run) refused with TransactionConflictException
	// because its item is in a transaction in flight, and how many times
	// DB.RetryConditional retries an optimistic write (default 8; -1
	// disables). The backoff is the batch backoff.
	TxConflictRetries int
	BatchBackoff      time.Duration
	BatchBackoffMax   time.Duration
}

// DB is an SDK handle over a DynamoDB client. It is safe for concurrent use.
type DB struct {
	client Client
	cfg    Config
}

// New returns a DB over client.
func New(client Client, cfg Config) *DB {
	if len(cfg.CursorKey) == 0 {
		cfg.CursorKey = make([]byte, 32)
		if _, err := rand.Read(cfg.CursorKey); err != nil {
			panic(err)
		}
	}
	if cfg.BatchRetries == 0 {
		cfg.BatchRetries = 8
	}
	switch {
	case cfg.TxConflictRetries == 0:
		cfg.TxConflictRetries = 8
	case cfg.TxConflictRetries < 0:
		cfg.TxConflictRetries = 0
	}
	if cfg.BatchBackoff == 0 {
		cfg.BatchBackoff = 25 * time.Millisecond
	}
	if cfg.BatchBackoffMax == 0 {
		cfg.BatchBackoffMax = 2 * time.Second
	}
	return &DB{client: client, cfg: cfg}
}

// WithCursorKey returns a DB like db (the same client, observer and
// settings) whose cursors are sealed under key. It is for cursors kept as
// server-side state that any process must open later, such as a job's
// place in a long walk, where db's own key may be each process's random
// one (Config.CursorKey empty).
func (db *DB) WithCursorKey(key []byte) *DB {
	c := *db
	c.cfg.CursorKey = key
	return &c
}

// Client returns the underlying client.
func (db *DB) Client() Client { return db.client }

// Table returns a handle on the named table with the given schema.
func (db *DB) Table(name string, schema *Schema) *Table {
	return &Table{db: db, name: name, schema: schema}
}

// Observer receives one Call per DynamoDB request the SDK makes.
type Observer interface {
	ObserveCall(ctx context.Context, c Call)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ctx context.Context, c Call)

// ObserveCall calls f.
func (f ObserverFunc) ObserveCall(ctx context.Context, c Call) { f(ctx, c) }

// Call describes one DynamoDB request.
type Call struct {
	Operation string // e.g. "PutItem", "Query"
	Table     string
	Index     string
	Duration  time.Duration
	// Capacity is the consumed capacity DynamoDB reported (capacity units,
	// summed over tables and indexes); 0 when none was reported.
	Capacity float64
	Err      error
}

// observe reports a finished call.
func (db *DB) observe(ctx context.Context, op, table, index string, start time.Time, cc []types.ConsumedCapacity, err error) {
	if db.cfg.Observer == nil {
		return
	}
	var units float64
	for _, c := range cc {
		if c.CapacityUnits != nil {
			units += *c.CapacityUnits
		}
	}
	db.cfg.Observer.ObserveCall(ctx, Call{Operation: op, Table: table, Index: index, Duration: time.Since(start), Capacity: units, Err: err})
}

// consumed returns the ReturnConsumedCapacity setting: TOTAL when
// observed, unless SkipConsumedCapacity.
func (db *DB) consumed() types.ReturnConsumedCapacity {
	if db.cfg.Observer == nil || db.cfg.SkipConsumedCapacity {
		return types.ReturnConsumedCapacityNone
	}
	return types.ReturnConsumedCapacityTotal
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}
