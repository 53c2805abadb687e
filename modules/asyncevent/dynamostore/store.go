// Package dynamostore stores AsyncEvent items in the single DynamoDB table
// AsyncEventTable, through sdk/ddb. It implements every store port of
// asyncevent (IngestStore, WorkerStore, AllocStore, ...: see the
// assertions by Store); the item types and their attribute names are in
// item.go.
//
// Items and keys (other readers of the table rely on these formats):
//
//	Request          REQ#<requestId>             / META
//	IdempotencyLock  IDEMP#<eventId>#<userId>    / LOCK
//	EventCapacity    EVENT#<eventId>             / CAPACITY
//	EventConfig      EVENT#<eventId>             / CONFIG
//	StatusLog        REQ#<requestId>             / LOG#<occurredAt>#<toStatus>
//	OpenEvent        EVENTS#OPEN                 / EVENT#<eventId>  (open.go)
//	LockJob          EVENTS#LOCKJOBS             / EVENT#<eventId>  (lockjob.go)
//
// GSI1 (USER#<userId> / QAT#<queuedAt>#REQ#<requestId>) and GSI2
// (EVENT#<eventId> / QAT#<queuedAt>#REQ#<requestId>; EVENT#<eventId>#<shard>
// for an event with IndexShards > 1, see shard.go) are on Request items
// only, enforced by the ddb entities; queuedAt is 13-digit epoch millis.
// GSI3, the pending index (pending.go), holds a request only while it is
// RECEIVED or its enqueue failed. The
// StatusLog sort key adds the target status to occurredAt, so that two
// transitions of one request in the same millisecond never collide. A
// status is reached twice only through an operator re-queue (FAILED_FINAL
// → RECEIVED → … → FAILED_FINAL again), whose writes are timed strictly
// after the request's last change; a collision still cancels the
// transition rather than overwrite a log.
//
// Every status transition is a TransactWriteItems holding the conditional
// request update, the StatusLog put and any guard (capacity decrement,
// sold-out check, event-open check), so a log never disagrees with its
// request. Transactions cancelled only by a TransactionConflict are retried
// with jittered backoff by ddb.DB.Transact itself.
package dynamostore

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// DefaultTable is the table's default name.
const DefaultTable = "AsyncEventTable"

// Schema is AsyncEventTable's schema: PK/SK, GSI1, GSI2, GSI3, TTL on "ttl" and
// a NEW_AND_OLD_IMAGES stream, from which the analytics events are derived
// (RequestChange, docs/events.md).
//
// GSI2, the event index, projects only what never changes once a request
// is queued (its keys, requestId and queuedAt), so that the request's
// later transitions (PROCESSING, SUCCEEDED...) do not write the index: a
// request writes its event's one GSI2 partition once, not three or four
// times (docs/capacity.md). Reads through GSI2 fetch the requests from
// the table (BatchGet). ProjectAllSchema keeps the first GSI2, projecting ALL
// (docs/asyncevent.md, The table's indexes).
//
// GSI3, the pending index, is sparse and projects ALL: its entries are few
// and short-lived (pending.go).
var Schema = ddb.Schema{
	PK: "PK", SK: "SK",
	Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"},
		{Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK",
			Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"requestId", "queuedAt"}},
		pendingIndex,
	},
	TTLAttribute: "ttl",
	Stream:       types.StreamViewTypeNewAndOldImages,
}

// ProjectAllSchema is Schema with GSI2 as first defined, projecting ALL attributes:
// every transition of a request writes GSI2 again. A Store on it (WithSchema)
// filters and reads requests from the index itself. Tables created before
// GSI2 was narrowed have it; docs/capacity.md says how to move them.
var ProjectAllSchema = func() ddb.Schema {
	s := Schema
	s.Indexes = []ddb.Index{Schema.Indexes[0], {Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"}, pendingIndex}
	return s
}()

// pendingIndex is GSI3, the pending index.
var pendingIndex = ddb.Index{Name: "GSI3", PK: "GSI3PK", SK: "GSI3SK"}

// Key formats.
var (
	requestPK = ddb.MustFormat("REQ#{requestId}")
	lockPK    = ddb.MustFormat("IDEMP#{eventId}#{userId}")
	eventPK   = ddb.MustFormat("EVENT#{eventId}")
	userPK    = ddb.MustFormat("USER#{userId}")
	logSK     = ddb.MustFormat("LOG#{occurredAt}#{toStatus}")
	queuedSK  = ddb.MustFormat("QAT#{queuedAt}#REQ#{requestId}")
)

// The domain's lifecycles on the items' "status" attribute.
var (
	requestMachine = ddb.NewMachine("status", asyncevent.Lifecycle)
	eventMachine   = ddb.NewMachine("status", asyncevent.EventLifecycle)
)

// requestEntity is the Request items' entity type, in the attribute
// entityType (ddb's default: Schema names no TypeAttribute).
const (
	requestEntity  = "REQUEST"
	entityTypeAttr = "entityType"
)

// Sort keys of the fixed items.
const (
	skMeta     = "META"
	skLock     = "LOCK"
	skCapacity = "CAPACITY"
	skConfig   = "CONFIG"
)

func requestKey(id string) ddb.Key { return ddb.Key{PK: requestPK.Build(id), SK: skMeta} }
func configKey(id string) ddb.Key  { return ddb.Key{PK: eventPK.Build(id), SK: skConfig} }
func capKey(id string) ddb.Key     { return ddb.Key{PK: eventPK.Build(id), SK: skCapacity} }

// IdempotencyKey returns IDEMP#<eventId>#<userId>.
func IdempotencyKey(eventID, userID string) string { return lockPK.Build(eventID, userID) }

// QueuedSortKey returns QAT#<queuedAt, 13 digits>#REQ#<requestId>.
func QueuedSortKey(queuedAt int64, requestID string) string {
	return queuedSK.Build(ddb.Millis(queuedAt), requestID)
}

// Store is the DynamoDB implementation of asyncevent's store ports.
type Store struct {
	// narrow says GSI2 does not project whole requests: reads through it
	// fetch them from the table.
	narrow   bool
	db       *ddb.DB
	table    *ddb.Table
	requests *ddb.Entity[RequestItem]
	// pending writes Request items with their pending-index keys.
	pending *ddb.Entity[pendingRequestItem]
	open    *ddb.Entity[OpenEventItem]
	// lockJobs are the lock-expiry jobs (lockjob.go).
	lockJobs *ddb.Entity[LockJobItem]
	locks    *ddb.Entity[LockItem]
	caps     *ddb.Entity[CapacityItem]
	configs  *ddb.Entity[EventConfigItem]
	logs     *ddb.Entity[StatusLogItem]
	// layouts caches each event's layout (eventID → layout), fixed at
	// creation: learnt from the configs this Store writes and reads.
	layouts sync.Map
	// walker is this Store on a DB whose cursors every process opens
	// (lockJobCursorKey): the lock jobs' walks keep their place in the
	// table, where another worker resumes them.
	walker *Store
}

// The ports Store implements, one per role's use.
var (
	_ asyncevent.EventReader    = (*Store)(nil)
	_ asyncevent.EventStore     = (*Store)(nil)
	_ asyncevent.IngestStore    = (*Store)(nil)
	_ asyncevent.WorkerStore    = (*Store)(nil)
	_ asyncevent.AllocStore     = (*Store)(nil)
	_ asyncevent.RequestReader  = (*Store)(nil)
	_ asyncevent.StatsReader    = (*Store)(nil)
	_ asyncevent.AdminReader    = (*Store)(nil)
	_ asyncevent.DrawStore      = (*Store)(nil)
	_ asyncevent.SweepStore     = (*Store)(nil)
	_ asyncevent.CapacityReader = (*Store)(nil)
	_ asyncevent.LockJobStore   = (*Store)(nil)
)

// Option configures a Store.
type Option func(*options)

type options struct{ schema *ddb.Schema }

// WithSchema makes the Store use schema (Schema or ProjectAllSchema; default
// Schema): it reads requests through GSI2 from the index when GSI2
// projects ALL, and from the table otherwise.
func WithSchema(schema *ddb.Schema) Option { return func(o *options) { o.schema = schema } }

// New returns a Store on the named table of db.
func New(db *ddb.DB, table string, opts ...Option) *Store {
	o := options{schema: &Schema}
	for _, f := range opts {
		f(&o)
	}
	s := newStore(db, table, o)
	s.walker = newStore(db.WithCursorKey(lockJobCursorKey), table, o)
	return s
}

func newStore(db *ddb.DB, table string, o options) *Store {
	t := db.Table(table, o.schema)
	ix, _ := o.schema.Index("GSI2")
	return &Store{
		db:     db,
		table:  t,
		narrow: ix.ProjectionType() != types.ProjectionTypeAll,
		requests: ddb.NewEntity(t, requestEntity, func(r *RequestItem) ddb.Key { return requestKey(r.RequestID) },
			"GSI1", "GSI2", "GSI3"),
		pending: ddb.NewEntity(t, requestEntity, func(r *pendingRequestItem) ddb.Key { return requestKey(r.RequestID) },
			"GSI1", "GSI2", "GSI3"),
		open:     ddb.NewEntity(t, "OPEN_EVENT", func(o *OpenEventItem) ddb.Key { return openKey(o.EventID) }),
		lockJobs: ddb.NewEntity(t, "LOCK_JOB", func(j *LockJobItem) ddb.Key { return lockJobKey(j.EventID) }),
		locks: ddb.NewEntity(t, "IDEMPOTENCY", func(l *LockItem) ddb.Key {
			return ddb.Key{PK: lockPK.Build(l.EventID, l.UserID), SK: skLock}
		}),
		caps:    ddb.NewEntity(t, "CAPACITY", func(c *CapacityItem) ddb.Key { return capKey(c.EventID) }),
		configs: ddb.NewEntity(t, "EVENT_CONFIG", func(c *EventConfigItem) ddb.Key { return configKey(c.EventID) }),
		logs: ddb.NewEntity(t, "STATUS_LOG", func(l *StatusLogItem) ddb.Key {
			return ddb.Key{PK: requestPK.Build(l.RequestID), SK: logSK.Build(ddb.Millis(l.OccurredAt), string(l.ToStatus))}
		}),
	}
}

// Ensure creates the table (with its GSIs and TTL) if it is missing.
func (s *Store) Ensure(ctx context.Context) error { return s.table.Ensure(ctx) }

func logTTL(at int64) int64 { return (at + asyncevent.LogTTL.Milliseconds()) / 1000 }
