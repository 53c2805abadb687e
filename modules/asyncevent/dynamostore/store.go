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
// A request whose enqueue failed has GSI1's keys alone, with its
// requestedAt in place of the queuedAt it lacks (asyncevent.Transition.
// ListedAt).
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

// The domain's lifecycles on the items' "status" attribute.
var (
	requestMachine = ddb.NewMachine("status", asyncevent.Lifecycle)
	eventMachine   = ddb.NewMachine("status", asyncevent.EventLifecycle)
)

// entityTypeAttr holds each item's entity type (ddb's default: Schema
// names no TypeAttribute).
const entityTypeAttr = "entityType"

// Entity type names, written to each item's entityType. The seeds name
// REQUEST, IDEMPOTENCY, CAPACITY and STATUS_LOG; the others are Pacer's
// (docs/contract.md).
const (
	RequestType     = "REQUEST"
	IdempotencyType = "IDEMPOTENCY"
	CapacityType    = "CAPACITY"
	StatusLogType   = "STATUS_LOG"
	EventConfigType = "EVENT_CONFIG"
	OpenEventType   = "OPEN_EVENT"
	LockJobType     = "LOCK_JOB"
	LineType        = "EVENT_LINE"
)

// EntityTypes lists every entity type a Store writes.
var EntityTypes = []string{RequestType, IdempotencyType, CapacityType, StatusLogType, EventConfigType, OpenEventType, LockJobType, LineType}

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

func lockKey(eventID, userID string) ddb.Key {
	return ddb.Key{PK: lockPK.Build(eventID, userID), SK: skLock}
}

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
	lines    *ddb.Entity[LineItem]
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
	_ asyncevent.LineStore      = (*Store)(nil)
)

// New returns a Store on table, a DB's table with Schema (or
// ProjectAllSchema: a Store reads requests through GSI2 from the index when
// GSI2 projects ALL, and from the table otherwise), as photo's
// dynamostore.New takes its table:
//
//	store := dynamostore.New(db.Table(dynamostore.DefaultTable, &dynamostore.Schema))
func New(table *ddb.Table) *Store {
	s := newStore(table)
	s.walker = newStore(table.DB().WithCursorKey(lockJobCursorKey).Table(table.Name(), table.Schema()))
	return s
}

func newStore(t *ddb.Table) *Store {
	ix, _ := t.Schema().Index("GSI2")
	return &Store{
		db:     t.DB(),
		table:  t,
		narrow: ix.ProjectionType() != types.ProjectionTypeAll,
		requests: ddb.NewEntity(t, RequestType, func(r *RequestItem) ddb.Key { return requestKey(r.RequestID) },
			"GSI1", "GSI2", "GSI3"),
		pending: ddb.NewEntity(t, RequestType, func(r *pendingRequestItem) ddb.Key { return requestKey(r.RequestID) },
			"GSI1", "GSI2", "GSI3"),
		open:     ddb.NewEntity(t, OpenEventType, func(o *OpenEventItem) ddb.Key { return openKey(o.EventID) }),
		lockJobs: ddb.NewEntity(t, LockJobType, func(j *LockJobItem) ddb.Key { return lockJobKey(j.EventID) }),
		locks:    ddb.NewEntity(t, IdempotencyType, func(l *LockItem) ddb.Key { return lockKey(l.EventID, l.UserID) }),
		caps:     ddb.NewEntity(t, CapacityType, func(c *CapacityItem) ddb.Key { return capKey(c.EventID) }),
		lines:    ddb.NewEntity(t, LineType, func(l *LineItem) ddb.Key { return lineKey(l.EventID) }),
		configs:  ddb.NewEntity(t, EventConfigType, func(c *EventConfigItem) ddb.Key { return configKey(c.EventID) }),
		logs: ddb.NewEntity(t, StatusLogType, func(l *StatusLogItem) ddb.Key {
			return ddb.Key{PK: requestPK.Build(l.RequestID), SK: logSK.Build(ddb.Millis(l.OccurredAt), string(l.ToStatus))}
		}),
	}
}

// Ensure creates the table (with its GSIs and TTL) if it is missing.
func (s *Store) Ensure(ctx context.Context) error { return s.table.Ensure(ctx) }

// logTTL is the TTL (epoch seconds) of a StatusLog of a transition at
// `at` of a request whose event ends at end (0: unknown): LogTTL after
// the later of the two (asyncevent.LogTTL).
func logTTL(at, end int64) int64 { return (max(at, end) + asyncevent.LogTTL.Milliseconds()) / 1000 }
