package asyncevent

import (
	"context"
	"iter"
	"time"
)

// The persistence the domain needs is declared as small interfaces, one per
// use; Store is all of them, and one concrete store (dynamostore on
// DynamoDB) implements it. Conditional failures are domain errors
// (*StateError, *EventStateError, ErrCapacityExhausted, ...); anything else
// is an infrastructure error, which the worker treats as retryable.

// EventStore keeps events: their settings and FIRST_COME seat counters.
type EventStore interface {
	// CreateEvent writes the EventConfig and, for FIRST_COME, the
	// EventCapacity atomically. ErrEventExists if the event exists.
	CreateEvent(ctx context.Context, cfg *EventConfig) error
	// GetEvent reads an EventConfig (strong: a strongly consistent read).
	// ErrEventNotFound if missing.
	GetEvent(ctx context.Context, eventID string, strong bool) (*EventConfig, error)
	// GetCapacity reads an EventCapacity. ErrEventNotFound if missing.
	GetCapacity(ctx context.Context, eventID string) (*Capacity, error)
	// MoveEvent moves an event from → to, applying set (attribute → value),
	// conditionally. *EventStateError if the event is not in from.
	MoveEvent(ctx context.Context, eventID string, from, to EventStatus, set map[string]any) error
	// OpenEvents iterates over the ids of the OPEN events of eventType
	// (on DynamoDB, a Query of one partition listing them).
	OpenEvents(ctx context.Context, eventType EventType) iter.Seq2[string, error]
}

// Transitioner moves requests along Lifecycle: ingest, the worker, the
// draw and the re-queues all do.
type Transitioner interface {
	// Transition applies t atomically (see Transition). Times on a request
	// only move forward: if t.At is not later than every time recorded on
	// the request (Request.LastChange), the store moves t.At, t.StartedAt
	// and t.FinishedAt to just after it, in t itself, and writes that.
	Transition(ctx context.Context, t *Transition) error
}

// IngestStore is what accepting a participation writes.
type IngestStore interface {
	Transitioner
	// CreateRequest writes the IdempotencyLock and the Request (RECEIVED),
	// with its first StatusLog, in one transaction. If the lock exists it
	// writes nothing and returns the stored requestId with dup true.
	CreateRequest(ctx context.Context, r *Request, lockTTL int64) (existing string, dup bool, err error)
}

// WorkerStore is what deciding a delivered message writes.
type WorkerStore interface {
	Transitioner
	// RecordAttempt notes a retryable failure on a request that is not
	// terminal: attempts (the receive count of the delivery that failed),
	// last error code, message and time. The last record wins: a redrive
	// or re-queue sends a new message whose receive count starts again at
	// 1, so a lower count is not necessarily an older record. workerID,
	// when set, is recorded as the request's workerId.
	RecordAttempt(ctx context.Context, requestID string, attempts int, code, message string, at int64, workerID string) error
}

// DrawStore is what a lottery draw needs beyond the event and the reads.
type DrawStore interface {
	Transitioner
	// SetPhase changes a PROCESSING request's uiPhase from → to.
	// *StateError if it is not PROCESSING in phase from.
	SetPhase(ctx context.Context, requestID string, from, to UIPhase) error
}

// SweepStore is what healing stranded requests and re-queueing failed
// enqueues write.
type SweepStore interface {
	Transitioner
	// MarkRequeued sets a request's requeuedAt to at, on condition that it
	// is RECEIVED, was requested before `before` and was not requeued since
	// `before`. *StateError otherwise.
	MarkRequeued(ctx context.Context, requestID string, at, before int64) error
	// SweepCandidates iterates over the requests RECEIVED before `before`
	// and those FAILED_FINAL with resultCode FAILED_INGEST_ENQUEUE, of
	// every event, requested since `since` (epoch millis; on DynamoDB, by
	// day: Queries of the pending index from since's day on).
	SweepCandidates(ctx context.Context, before, since int64) iter.Seq2[*Request, error]
	// ReopenFailedEnqueue moves a FAILED_FINAL / FAILED_INGEST_ENQUEUE
	// request back to RECEIVED for an operator re-queue, outside Lifecycle:
	// it removes finishedAt and the failure fields, sets uiResult PENDING
	// and requeuedAt = at, and writes the StatusLog, in one transaction, on
	// condition that its finishedAt is still finishedAt (the failure the
	// caller read, not a later one): *StateError if not. When openEvent is
	// not "", the same transaction checks that that event is OPEN:
	// *EventStateError if not (the request is checked first).
	ReopenFailedEnqueue(ctx context.Context, requestID string, finishedAt, at int64, openEvent string) error
}

// RequestReader reads requests for their owners, admins and the draw.
type RequestReader interface {
	// GetRequest reads a request. ErrRequestNotFound if missing.
	GetRequest(ctx context.Context, requestID string) (*Request, error)
	// UserRequests pages through a user's requests, newest queuedAt first.
	// ErrCursor for a bad cursor.
	UserRequests(ctx context.Context, userID string, limit int, cursor string) ([]*Request, string, error)
	// EventRequests pages through an event's requests, keeping only status
	// when it is not "": first those not queued (see PendingRequests),
	// newest requestedAt first, then the queued ones, newest queuedAt first.
	EventRequests(ctx context.Context, eventID string, status Status, limit int, cursor string) ([]*Request, string, error)
	// AllEventRequests iterates over all of an event's queued requests in
	// queuedAt order (oldest first).
	AllEventRequests(ctx context.Context, eventID string) iter.Seq2[*Request, error]
	// PendingRequests iterates over an event's requests that are not
	// queued: RECEIVED, and FAILED_FINAL with resultCode
	// FAILED_INGEST_ENQUEUE (in no particular order).
	PendingRequests(ctx context.Context, eventID string) iter.Seq2[*Request, error]
	// Logs lists a request's StatusLog items, oldest first.
	Logs(ctx context.Context, requestID string) ([]*StatusLog, error)
}

// LockJobStore keeps the lock-expiry jobs and shortens locks.
type LockJobStore interface {
	// CloseEvent moves a FIRST_COME event OPEN → CLOSED (updatedAt = at)
	// and records job, in one write. *EventStateError if it is not OPEN.
	CloseEvent(ctx context.Context, eventID string, at int64, job *LockJob) error
	// LockJobs iterates over the jobs not finished.
	LockJobs(ctx context.Context) iter.Seq2[*LockJob, error]
	// LeaseLockJob makes owner the job's worker until `until` (epoch
	// millis), on condition that it is not finished and that its lease
	// is owner's or over at now; it returns the job as it is then. ErrLeased
	// if another worker holds it, ErrLockJobNotFound if it is gone or
	// finished.
	LeaseLockJob(ctx context.Context, eventID, owner string, now, until int64) (*LockJob, error)
	// SaveLockJob records owner's progress (cursor, done) and extends its
	// lease to until; finished ends the job (its item expires a week
	// later). ErrLeased if owner no longer holds the lease.
	SaveLockJob(ctx context.Context, eventID, owner, cursor string, done, until int64, finished bool) error
	// LockJobPage pages through an event's requests as EventRequests does,
	// with cursors that any process opens (a job keeps its cursor and
	// another worker may resume it). ErrCursor for a bad cursor.
	LockJobPage(ctx context.Context, eventID string, limit int, cursor string) ([]*Request, string, error)
	// ShortenLock sets the TTL of a lock to ttl if it has a later one (or
	// none). It reports whether it wrote; a lock already as short, or
	// gone, is not an error.
	ShortenLock(ctx context.Context, eventID, userID string, ttl int64) (bool, error)
}

// Store is every port at once: what a Service is built from.
type Store interface {
	EventStore
	IngestStore
	WorkerStore
	DrawStore
	SweepStore
	RequestReader
	AllocStore
	LockJobStore
}

// Transition is one conditional status change of a request, applied
// atomically with its StatusLog and any guards.
type Transition struct {
	RequestID string
	EventID   string
	UserID    string
	From      []Status
	To        Status
	At        int64 // epoch millis: the StatusLog's occurredAt
	Message   string

	// QueuedAt, when non-zero, records the enqueue time and the GSI1/GSI2
	// keys QAT#<queuedAt>#REQ#<requestId>. With KeepQueuedAt, an existing
	// queuedAt (and its keys) is kept.
	QueuedAt     int64
	KeepQueuedAt bool
	// IndexShards is the event's EventConfig.IndexShards, which picks the
	// GSI2 partition the queuedAt keys go to (0 or 1: the event's one
	// partition, EVENT#<eventId>; docs/asyncevent.md).
	IndexShards int

	// Fields set with the transition (zero values are not written).
	StartedAt    int64
	FinishedAt   int64
	UIPhase      UIPhase
	UIResult     UIResult
	ResultCode   ResultCode
	FailureClass FailureClass
	ErrorCode    string
	ErrorMessage string
	Attempts     int
	Ticket       string
	Rank         int
	// WorkerID, when set, is recorded as the request's workerId: the
	// worker process making the transition.
	WorkerID string
	// RequirePhase, when set, makes the transition conditional on the
	// request's uiPhase.
	RequirePhase UIPhase

	// TakeSeat decrements the event's capacityRemaining (only if it stays
	// ≥ 0) in the same transaction: ErrCapacityExhausted if none is left,
	// ErrEventNotFound if the event has no capacity item.
	TakeSeat bool
	// RequireSoldOut adds the condition capacityRemaining ≤ 0:
	// ErrCapacityLeft if seats remain.
	RequireSoldOut bool
	// RequireEventOpen adds the condition that the EventConfig is OPEN
	// (*EventStateError otherwise) and, in the same transaction, counts the
	// request as one of the event's lottery entries (EventConfig.EntryCount).
	RequireEventOpen bool
}

// Queue sends participation messages. sqsqueue implements it.
type Queue interface {
	// Send enqueues body.
	Send(ctx context.Context, body string) error
	// SendAfter enqueues body to be delivered no earlier than delay from
	// now (SQS DelaySeconds: whole seconds, rounded up, at most
	// MaxSendDelay). An arrival candidate's message is continued this way
	// while its request waits for the allocator (see Service.Process).
	SendAfter(ctx context.Context, body string, delay time.Duration) error
}

// MaxSendDelay is the longest Queue.SendAfter delay: SQS's DelaySeconds
// limit.
const MaxSendDelay = 15 * time.Minute

// DeadLetters is the admin's view of the dead-letter queue. sqsqueue
// implements it.
type DeadLetters interface {
	// Depths returns the approximate number of messages in the main queue
	// and in the DLQ.
	Depths(ctx context.Context) (main, dlq int, err error)
	// PeekDead returns up to max DLQ messages without consuming them
	// (each physical message once, copies included).
	PeekDead(ctx context.Context, max int) ([]DeadLetter, error)
	// RedriveClass moves the DLQ messages of one class back to the main
	// queue, one message per request (see DeadKey): copies of a message
	// are deleted, not moved. It looks at up to max DLQ messages.
	RedriveClass(ctx context.Context, class DeadClass, max int) (RedriveResult, error)
	// Redrive moves every DLQ message back to the main queue, returning a
	// handle of the move; ErrRedriveRunning if a move is already running.
	Redrive(ctx context.Context) (string, error)
}

// DeadLetter is one message in the DLQ.
type DeadLetter struct {
	MessageID    string
	Body         string
	ReceiveCount int
	SentAt       int64
	// Class and ErrorCode are the worker's tag (the deadClass and
	// errorCode message attributes); Class is DeadUnknown for a message
	// SQS moved by itself.
	Class     DeadClass
	ErrorCode string
}

// RedriveResult is what a RedriveClass did.
type RedriveResult struct {
	// Moved counts the messages sent back to the main queue.
	Moved int `json:"moved"`
	// Dropped counts the copies deleted instead (a message tagged by a
	// worker whose delete from the main queue failed, which SQS then moved
	// untagged too: same request, so one delivery is enough).
	Dropped int `json:"dropped"`
	// More says the DLQ had more messages than were looked at: call again.
	More bool `json:"more"`
}
