// Package dynamostore stores AsyncEvent items in the single DynamoDB table
// AsyncEventTable, through sdk/ddb. It implements asyncevent.Store; the item
// types and their attribute names are in item.go.
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
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
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

// Store is the DynamoDB implementation of asyncevent.Store.
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

var _ asyncevent.Store = (*Store)(nil)

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

// CreateEvent implements asyncevent.Store.
func (s *Store) CreateEvent(ctx context.Context, cfg *asyncevent.EventConfig) error {
	ops := []*ddb.Op{s.configs.Create(eventConfigItem(cfg)).Label("config")}
	if cfg.Status == asyncevent.EventOpen {
		ops = append(ops, s.open.Put(&OpenEventItem{EventID: cfg.EventID, EventType: cfg.EventType, EndsAt: cfg.EndsAt(), TTL: cfg.TTL}))
	}
	if cfg.EventType == asyncevent.FirstCome {
		ops = append(ops, s.caps.Create(&CapacityItem{
			EventID: cfg.EventID, CapacityTotal: cfg.CapacityTotal, CapacityRemaining: cfg.CapacityTotal, UpdatedAt: cfg.CreatedAt, TTL: cfg.TTL,
		}).Label("capacity"))
	}
	err := s.db.Transact(ctx, ops...)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return fmt.Errorf("%w: %s", asyncevent.ErrEventExists, cfg.EventID)
	}
	if err == nil {
		s.learn(cfg)
	}
	return err
}

// GetEvent implements asyncevent.Store.
func (s *Store) GetEvent(ctx context.Context, eventID string, strong bool) (*asyncevent.EventConfig, error) {
	get := s.configs.Get
	if strong {
		get = s.configs.GetStrong
	}
	it, err := get(ctx, configKey(eventID))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", asyncevent.ErrEventNotFound, eventID)
	}
	if err != nil {
		return nil, err
	}
	cfg := it.eventConfig()
	s.learn(cfg)
	return cfg, nil
}

// GetCapacity implements asyncevent.Store.
func (s *Store) GetCapacity(ctx context.Context, eventID string) (*asyncevent.Capacity, error) {
	it, err := s.caps.GetStrong(ctx, capKey(eventID))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s has no capacity", asyncevent.ErrEventNotFound, eventID)
	}
	if err != nil {
		return nil, err
	}
	return it.capacity(), nil
}

// MoveEvent implements asyncevent.Store.
func (s *Store) MoveEvent(ctx context.Context, eventID string, from, to asyncevent.EventStatus, set map[string]any) error {
	u := ddb.Transition(s.configs, configKey(eventID), eventMachine, to, from).Label("event")
	for k, v := range set {
		u.Set(k, v)
	}
	if from != asyncevent.EventOpen {
		err := u.Run(ctx)
		var ce *ddb.ConditionError
		if errors.As(err, &ce) {
			return eventStateErr(eventID, ce.Exists(), ce.Decode)
		}
		return err
	}
	// Out of OPEN: off the open events' list in the same write.
	err := s.db.Transact(ctx, u.Op(), s.open.Delete(openKey(eventID)))
	var te *ddb.TxError
	if errors.As(err, &te) {
		if r := te.Reason("event"); r != nil {
			return eventStateErr(eventID, r.Item != nil, r.Decode)
		}
	}
	return err
}

// CreateRequest implements asyncevent.Store.
func (s *Store) CreateRequest(ctx context.Context, r *asyncevent.Request, lockTTL int64) (string, bool, error) {
	r.IdempotencyKey = IdempotencyKey(r.EventID, r.UserID)
	shards, err := s.indexShards(ctx, r.EventID)
	if err != nil {
		return "", false, err
	}
	item := &pendingRequestItem{RequestItem: *requestItem(r)}
	item.GSI3PK, item.GSI3SK = pendingKeys(r, shards)
	lock := &LockItem{EventID: r.EventID, UserID: r.UserID, RequestID: r.RequestID, CreatedAt: r.RequestedAt, TTL: lockTTL}
	log := &StatusLogItem{RequestID: r.RequestID, ToStatus: r.Status, OccurredAt: r.RequestedAt, Message: "received", TTL: logTTL(r.RequestedAt)}
	err = s.db.Transact(ctx,
		s.locks.Create(lock).Label("lock"),
		s.pending.Create(item).Label("request"),
		s.logs.Create(log).Label("log"),
	)
	var te *ddb.TxError
	if errors.As(err, &te) {
		if reason := te.Reason("lock"); reason != nil && reason.Item != nil {
			var old LockItem
			if err := reason.Decode(&old); err != nil {
				return "", false, err
			}
			return old.RequestID, true, nil
		}
	}
	if err != nil {
		return "", false, err
	}
	return r.RequestID, false, nil
}

// Transition implements asyncevent.Store. With several From states it
// tries them in order, jumping to the request's current status when a
// condition fails on another of them, so that the StatusLog names the
// true source state.
//
// Times on a request only move forward: the write is conditional on t.At
// being later than every time already recorded on the request. Processes
// take their clock readings before they write (and their clocks may
// differ), so a worker's reading can predate ingest's QUEUED update that
// lands before the worker's write; the condition then fails, t's times
// are moved to just after the latest recorded one and the write is tried
// again. Without it the StatusLog (sorted by time) would list PROCESSING
// before QUEUED and queueDelayMs would be negative.
func (s *Store) Transition(ctx context.Context, t *asyncevent.Transition) error {
	if len(t.From) == 0 {
		return fmt.Errorf("dynamostore: transition of %s to %s without a source state", t.RequestID, t.To)
	}
	from := t.From[0]
	// The status may move between tries while staying a valid source: a
	// worker can see RECEIVED, try from RECEIVED, and meanwhile ingest makes
	// it QUEUED. Follow it a few times rather than give the message up.
	for attempt := 0; ; attempt++ {
		err := s.transition(ctx, t, from)
		var se *asyncevent.StateError
		if !errors.As(err, &se) || se.Current == nil {
			return err
		}
		next := se.Current.Status
		last := se.Current.LastChange()
		early := next == from && last >= t.At // refused for its time, not its state
		if (next == from && !early) || !contains(t.From, next) || attempt >= 2*len(t.From)+1 {
			se.Want = t.From
			return err
		}
		from = next
		// The request moved after t's times were taken: this transition
		// comes after that move, in the request and in its log.
		if last >= t.At {
			shift := last + 1 - t.At
			t.At += shift
			if t.StartedAt != 0 {
				t.StartedAt += shift
			}
			if t.FinishedAt != 0 {
				t.FinishedAt += shift
			}
		}
	}
}

// requestTimes are the request attributes Request.LastChange reads.
var requestTimes = [...]string{"requestedAt", "queuedAt", "startedAt", "finishedAt", "requeuedAt"}

func contains(ss []asyncevent.Status, s asyncevent.Status) bool {
	for _, v := range ss {
		if v == s {
			return true
		}
	}
	return false
}

func (s *Store) transition(ctx context.Context, t *asyncevent.Transition, from asyncevent.Status) error {
	err := s.db.Transact(ctx, s.transitionOps(t, from)...)
	var te *ddb.TxError
	if !errors.As(err, &te) {
		return err
	}
	// The request's own state explains the most; then the guards.
	if r := te.Reason("request"); r != nil {
		return txStateErr(t.RequestID, from, r)
	}
	if r := te.Reason("capacity"); r != nil {
		if r.Item == nil {
			return fmt.Errorf("%w: %s has no capacity item", asyncevent.ErrEventNotFound, t.EventID)
		}
		return asyncevent.ErrCapacityExhausted
	}
	if r := te.Reason("soldout"); r != nil {
		if r.Item == nil {
			return fmt.Errorf("%w: %s has no capacity item", asyncevent.ErrEventNotFound, t.EventID)
		}
		return asyncevent.ErrCapacityLeft
	}
	if r := te.Reason("event"); r != nil {
		return eventStateErr(t.EventID, r.Item != nil, r.Decode)
	}
	return err
}

// transitionOps are the operations of t from the status from: the
// conditional request update, its StatusLog and t's guards.
func (s *Store) transitionOps(t *asyncevent.Transition, from asyncevent.Status) []*ddb.Op {
	u := ddb.Transition(s.requests, requestKey(t.RequestID), requestMachine, t.To, from).Label("request")
	setInt := func(name string, v int64) {
		if v != 0 {
			u.Set(name, v)
		}
	}
	setStr := func(name, v string) {
		if v != "" {
			u.Set(name, v)
		}
	}
	setInt("startedAt", t.StartedAt)
	setInt("finishedAt", t.FinishedAt)
	setInt("attempts", int64(t.Attempts))
	setInt("lotteryRank", int64(t.Rank))
	setStr("uiPhase", string(t.UIPhase))
	setStr("uiResult", string(t.UIResult))
	setStr("resultCode", string(t.ResultCode))
	setStr("failureClass", string(t.FailureClass))
	setStr("errorCode", t.ErrorCode)
	setStr("errorMessage", t.ErrorMessage)
	setStr("lotteryTicket", t.Ticket)
	setStr("workerId", t.WorkerID)
	if t.QueuedAt != 0 {
		set := u.Set
		if t.KeepQueuedAt {
			set = u.SetIfNotExists
		}
		qat := QueuedSortKey(t.QueuedAt, t.RequestID)
		set("queuedAt", t.QueuedAt)
		set("GSI1PK", userPK.Build(t.UserID))
		set("GSI1SK", qat)
		set("GSI2PK", eventIndexPK(t.EventID, t.RequestID, t.IndexShards))
		set("GSI2SK", qat)
	}
	if !stillPending(t) {
		u.Remove("GSI3PK").Remove("GSI3SK") // off the pending index
	}
	if t.RequirePhase != "" {
		u.If(expression.Name("uiPhase").Equal(expression.Value(string(t.RequirePhase))))
	}
	for _, name := range requestTimes {
		n := expression.Name(name)
		u.If(expression.AttributeNotExists(n).Or(n.LessThan(expression.Value(t.At))))
	}
	ops := []*ddb.Op{
		u.Op(),
		s.logs.Create(&StatusLogItem{
			RequestID: t.RequestID, FromStatus: from, ToStatus: t.To, OccurredAt: t.At, Message: t.Message, TTL: logTTL(t.At),
		}).Label("log"),
	}
	remaining := expression.Name("capacityRemaining")
	if t.TakeSeat {
		zero := int64(0)
		ops = append(ops, s.caps.Update(capKey(t.EventID)).Bounded("capacityRemaining", -1, &zero, nil).
			Set("updatedAt", t.At).Label("capacity").Op())
	}
	if t.RequireSoldOut {
		ops = append(ops, s.caps.Check(capKey(t.EventID)).If(remaining.LessThanEqual(expression.Value(0))).Label("soldout"))
	}
	if t.RequireEventOpen {
		// The entry is counted where it is admitted: the draw checks that
		// the index shows exactly this many entries before it ranks them.
		ops = append(ops, s.configs.Update(configKey(t.EventID)).Add("entryCount", 1).
			If(expression.Name("status").Equal(expression.Value(string(asyncevent.EventOpen)))).Label("event").Op())
	}
	return ops
}

// eventStateErr is the *asyncevent.EventStateError of a refused condition
// on an event: exists says whether the event exists, and decode reads it as
// it is now (from a *ddb.ConditionError or a *ddb.TxReason).
func eventStateErr(eventID string, exists bool, decode func(any) error) error {
	ese := &asyncevent.EventStateError{EventID: eventID}
	if exists {
		var it EventConfigItem
		if err := decode(&it); err != nil {
			return err
		}
		ese.Current = it.eventConfig()
	}
	return ese
}

// SetPhase implements asyncevent.Store.
func (s *Store) SetPhase(ctx context.Context, requestID string, from, to asyncevent.UIPhase) error {
	err := s.requests.Update(requestKey(requestID)).Set("uiPhase", string(to)).
		If(expression.Name("status").Equal(expression.Value(string(asyncevent.StatusProcessing)))).
		If(expression.Name("uiPhase").Equal(expression.Value(string(from)))).
		Label("request").Run(ctx)
	return stateErr(requestID, err)
}

// RecordAttempt implements asyncevent.Store.
func (s *Store) RecordAttempt(ctx context.Context, requestID string, attempts int, code, message string, at int64, workerID string) error {
	u := s.requests.Update(requestKey(requestID)).
		Set("lastErrorCode", code).Set("lastErrorMessage", message).Set("lastErrorAt", at).
		If(expression.Name("status").In(
			expression.Value(string(asyncevent.StatusReceived)),
			expression.Value(string(asyncevent.StatusQueued)),
			expression.Value(string(asyncevent.StatusProcessing))))
	if attempts > 0 {
		u.Set("attempts", attempts)
	}
	if workerID != "" {
		u.Set("workerId", workerID)
	}
	return stateErr(requestID, u.Label("attempt").Run(ctx))
}

// MarkRequeued implements asyncevent.Store.
func (s *Store) MarkRequeued(ctx context.Context, requestID string, at, before int64) error {
	requeued := expression.Name("requeuedAt")
	err := s.requests.Update(requestKey(requestID)).Set("requeuedAt", at).
		If(expression.Name("status").Equal(expression.Value(string(asyncevent.StatusReceived)))).
		If(expression.Name("requestedAt").LessThan(expression.Value(before))).
		If(expression.AttributeNotExists(requeued).Or(requeued.LessThan(expression.Value(before)))).
		Label("requeue").Run(ctx)
	return stateErr(requestID, err)
}

// ReopenFailedEnqueue implements asyncevent.Store.
func (s *Store) ReopenFailedEnqueue(ctx context.Context, requestID string, finishedAt, at int64, openEvent string) error {
	u := s.requests.Update(requestKey(requestID)).
		Set("status", string(asyncevent.StatusReceived)).
		Set("uiResult", string(asyncevent.ResultPending)).
		Set("requeuedAt", at).
		Remove("finishedAt").Remove("resultCode").Remove("failureClass").Remove("errorCode").Remove("errorMessage").
		If(expression.Name("status").Equal(expression.Value(string(asyncevent.StatusFailedFinal)))).
		If(expression.Name("resultCode").Equal(expression.Value(string(asyncevent.CodeFailedIngestEnqueue)))).
		If(expression.Name("finishedAt").Equal(expression.Value(finishedAt))).
		Label("request")
	ops := []*ddb.Op{u.Op(), s.logs.Create(&StatusLogItem{
		RequestID: requestID, FromStatus: asyncevent.StatusFailedFinal, ToStatus: asyncevent.StatusReceived,
		OccurredAt: at, Message: "operator re-queue", TTL: logTTL(at),
	}).Label("log")}
	if openEvent != "" {
		ops = append(ops, s.configs.Check(configKey(openEvent)).
			If(expression.Name("status").Equal(expression.Value(string(asyncevent.EventOpen)))).Label("event"))
	}
	err := s.db.Transact(ctx, ops...)
	var te *ddb.TxError
	if errors.As(err, &te) {
		if r := te.Reason("request"); r != nil {
			return txStateErr(requestID, asyncevent.StatusFailedFinal, r)
		}
		if r := te.Reason("event"); r != nil {
			return eventStateErr(openEvent, r.Item != nil, r.Decode)
		}
		if te.Reason("log") != nil {
			// Another re-queue of the same failure wrote this log first.
			return &asyncevent.StateError{RequestID: requestID, Want: []asyncevent.Status{asyncevent.StatusFailedFinal}}
		}
	}
	return err
}

// txStateErr is the *StateError of a transaction whose request action
// (expected in state want) was refused: r carries the request as it was.
func txStateErr(requestID string, want asyncevent.Status, r *ddb.TxReason) error {
	return requestStateErr(requestID, []asyncevent.Status{want}, r.Item != nil, r.Decode)
}

// stateErr turns a failed condition on a request into a *StateError.
func stateErr(requestID string, err error) error {
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) {
		return err
	}
	return requestStateErr(requestID, nil, ce.Exists(), ce.Decode)
}

// requestStateErr is the *asyncevent.StateError of a refused condition on
// a request: exists says whether the request exists, and decode reads it as
// it is now.
func requestStateErr(requestID string, want []asyncevent.Status, exists bool, decode func(any) error) error {
	se := &asyncevent.StateError{RequestID: requestID, Want: want}
	if exists {
		var it RequestItem
		if err := decode(&it); err != nil {
			return err
		}
		se.Current = it.request()
	}
	return se
}

// GetRequest implements asyncevent.Store (a strongly consistent read, so a
// client polling right after its 202 sees its request).
func (s *Store) GetRequest(ctx context.Context, requestID string) (*asyncevent.Request, error) {
	it, err := s.requests.GetStrong(ctx, requestKey(requestID))
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, asyncevent.ErrRequestNotFound
	}
	if err != nil {
		return nil, err
	}
	return it.request(), nil
}

// UserRequests implements asyncevent.Store.
func (s *Store) UserRequests(ctx context.Context, userID string, limit int, cursor string) ([]*asyncevent.Request, string, error) {
	return page(ctx, s.requests.Query("GSI1", userPK.Build(userID)).Desc().Limit(limit).After(cursor))
}

// queuedRequests pages through eventID's queued requests (GSI2).
// With a sharded index (IndexShards > 1) it merges the shards' queries
// (ddb.NewMerge) and reads as from a narrow index; the cursor is the
// merge's, bound to the event's shards.
func (s *Store) queuedRequests(ctx context.Context, eventID string, status asyncevent.Status, limit int, cursor string) ([]*asyncevent.Request, string, error) {
	shards, err := s.indexShards(ctx, eventID)
	if err != nil {
		return nil, "", err
	}
	query := func(n int, after string) pager {
		if shards > 1 {
			return s.shardMerge(eventID, shards, true, func(q *ddb.Query[RequestItem]) *ddb.Query[RequestItem] { return q.Desc() }).Limit(n).After(after)
		}
		return s.requests.Query("GSI2", eventPK.Build(eventID)).Desc().Limit(n).After(after)
	}
	if !s.narrow && shards == 1 {
		q := s.requests.Query("GSI2", eventPK.Build(eventID)).Desc().Limit(limit).After(cursor)
		if status != "" {
			q.Filter(expression.Name("status").Equal(expression.Value(string(status))))
		}
		return page(ctx, q)
	}
	// The index holds no status: the page's requests are read from the
	// table and filtered here, reading on as a filtered query does until
	// the page is full or the index ends. Each step reads only as many
	// entries as the page still lacks, so it never reads past the page's
	// last request, and the cursor resumes right after what was read.
	var rs []*asyncevent.Request
	for {
		p, err := query(limit-len(rs), cursor).Page(ctx)
		if err != nil {
			return pageErr(err)
		}
		items, err := s.fetch(ctx, p.Items, status)
		if err != nil {
			return nil, "", err
		}
		for _, it := range items {
			rs = append(rs, it.request())
		}
		cursor = p.Cursor
		if cursor == "" {
			return rs, "", nil
		}
		if len(rs) == limit {
			// Like the filtered query, the last page has no cursor: look
			// on for one more request of the status.
			more, err := s.anyAfter(ctx, query, cursor, status)
			if err != nil || !more {
				return rs, "", err
			}
			return rs, cursor, nil
		}
	}
}

// anyAfter reports whether the index holds a request of status after
// cursor, reading as little of it as it can.
func (s *Store) anyAfter(ctx context.Context, query func(int, string) pager, cursor string, status asyncevent.Status) (bool, error) {
	if status == "" {
		return true, nil
	}
	// One entry first (the next one often has the status), then more
	// at a time, up to a BatchGet's worth.
	for n := 1; cursor != ""; n = min(2*n, ddb.MaxBatchGet) {
		p, err := query(n, cursor).Page(ctx)
		if err != nil {
			return false, err
		}
		items, err := s.fetch(ctx, p.Items, status)
		if err != nil || len(items) > 0 {
			return len(items) > 0, err
		}
		cursor = p.Cursor
	}
	return false, nil
}

// fetch reads the requests of index entries from the table (one BatchGet
// per 100, eventually consistent like the index), in the entries' order,
// keeping those in one of statuses (all when none is given). A request
// gone from the table (expired) is left out.
func (s *Store) fetch(ctx context.Context, entries []*RequestItem, statuses ...asyncevent.Status) ([]*RequestItem, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	keys := make([]ddb.Key, len(entries))
	for i, e := range entries {
		keys[i] = requestKey(e.RequestID)
	}
	items, err := s.requests.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := items[:0]
	for _, it := range items {
		if it != nil && (len(statuses) == 0 || statuses[0] == "" || contains(statuses, it.Status)) {
			out = append(out, it)
		}
	}
	return out, nil
}

// index iterates over the requests a GSI2 query finds, whole: from the
// index when it projects ALL (filtered there to statuses), else fetched
// from the table 100 at a time.
func (s *Store) index(ctx context.Context, q *ddb.Query[RequestItem], statuses ...asyncevent.Status) iter.Seq2[*asyncevent.Request, error] {
	if !s.narrow {
		if len(statuses) > 0 {
			vs := make([]expression.OperandBuilder, len(statuses))
			for i, st := range statuses {
				vs[i] = expression.Value(string(st))
			}
			q.Filter(expression.Name("status").In(vs[0], vs[1:]...))
		}
		return requests(q.All(ctx))
	}
	return s.fetchAll(ctx, q.All(ctx), statuses...)
}

// pager is a GSI2 read one page at a time: a query, or the merge of a
// sharded index's.
type pager interface {
	Page(ctx context.Context) (ddb.Page[RequestItem], error)
}

// eventIndex iterates over the requests of eventID's index, whole, in
// GSI2 order (see index), each shard's query shaped by cond; a sharded
// index's shards are merged and its requests read from the table.
func (s *Store) eventIndex(ctx context.Context, eventID string, cond func(*ddb.Query[RequestItem]) *ddb.Query[RequestItem], statuses ...asyncevent.Status) iter.Seq2[*asyncevent.Request, error] {
	shards, err := s.indexShards(ctx, eventID)
	switch {
	case err != nil:
		return func(yield func(*asyncevent.Request, error) bool) { yield(nil, err) }
	case shards > 1:
		return s.fetchAll(ctx, s.shardMerge(eventID, shards, false, cond).Limit(ddb.MaxPageSize).All(ctx), statuses...)
	}
	return s.index(ctx, cond(s.requests.Query("GSI2", eventPK.Build(eventID))).Limit(ddb.MaxPageSize), statuses...)
}

// fetchAll iterates over the requests of index entries, read from the
// table 100 at a time and kept if in one of statuses (all if none).
func (s *Store) fetchAll(ctx context.Context, entries iter.Seq2[*RequestItem, error], statuses ...asyncevent.Status) iter.Seq2[*asyncevent.Request, error] {
	return func(yield func(*asyncevent.Request, error) bool) {
		var batch []*RequestItem
		flush := func() bool {
			items, err := s.fetch(ctx, batch, statuses...)
			batch = batch[:0]
			if err != nil {
				yield(nil, err)
				return false
			}
			for _, it := range items {
				if !yield(it.request(), nil) {
					return false
				}
			}
			return true
		}
		for e, err := range entries {
			if err != nil {
				yield(nil, err)
				return
			}
			if batch = append(batch, e); len(batch) == ddb.MaxBatchGet && !flush() {
				return
			}
		}
		flush()
	}
}

func page(ctx context.Context, q *ddb.Query[RequestItem]) ([]*asyncevent.Request, string, error) {
	p, err := q.Page(ctx)
	if err != nil {
		return pageErr(err)
	}
	rs := make([]*asyncevent.Request, len(p.Items))
	for i, it := range p.Items {
		rs[i] = it.request()
	}
	return rs, p.Cursor, nil
}

func pageErr(err error) ([]*asyncevent.Request, string, error) {
	if errors.Is(err, ddb.ErrCursor) {
		return nil, "", fmt.Errorf("%w: %v", asyncevent.ErrCursor, err)
	}
	return nil, "", err
}

// AllEventRequests implements asyncevent.Store.
func (s *Store) AllEventRequests(ctx context.Context, eventID string) iter.Seq2[*asyncevent.Request, error] {
	return s.eventIndex(ctx, eventID, func(q *ddb.Query[RequestItem]) *ddb.Query[RequestItem] { return q })
}

// Logs implements asyncevent.Store.
func (s *Store) Logs(ctx context.Context, requestID string) ([]*asyncevent.StatusLog, error) {
	var out []*asyncevent.StatusLog
	for l, err := range s.logs.Query("", requestPK.Build(requestID)).BeginsWith("LOG#").Limit(ddb.MaxPageSize).All(ctx) {
		if err != nil {
			return nil, err
		}
		out = append(out, l.statusLog())
	}
	return out, nil
}
