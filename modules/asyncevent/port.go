package asyncevent

import (
	"context"
	"iter"
	"time"
)

// The persistence the roles need is declared as small interfaces, one per
// use: each role's config names the ports it reads and writes (IngestConfig.
// Requests is an IngestStore, WorkerConfig.Requests a WorkerStore, ...), and
// one concrete store (dynamostore on DynamoDB) implements them all.
// Conditional failures are domain errors (*StateError, *EventStateError,
// ErrCapacityExhausted, ...); anything else is an infrastructure error,
// which the worker treats as retryable.

// EventReader reads events: what ingest and the worker read (through the
// process's EventCache), and what the other event ports start from.
type EventReader interface {
	// GetEvent reads an EventConfig (strong: a strongly consistent read).
	// ErrEventNotFound if missing.
	GetEvent(ctx context.Context, eventID string, strong bool) (*EventConfig, error)
}

// EventStore keeps events: what the admin creates, closes and draws.
type EventStore interface {
	EventReader
	// CreateEvent writes the EventConfig and, for FIRST_COME, the
	// EventCapacity atomically. ErrEventExists if the event exists.
	CreateEvent(ctx context.Context, cfg *EventConfig) error
	// MoveEvent applies m: it moves an event from m.From to m.To, applying
	// m.Set, conditionally. *EventStateError if the event is not in From.
	MoveEvent(ctx context.Context, m EventMove) error
	// CloseEvent moves a FIRST_COME event OPEN → CLOSED (updatedAt = at)
	// and records job, in one write. *EventStateError if it is not OPEN.
	CloseEvent(ctx context.Context, eventID string, at int64, job *LockJob) error
}

// EventMove is one conditional status change of an event (EventStore.
// MoveEvent).
type EventMove struct {
	// EventID is the event moved.
	EventID string
	// From is the status the event must be in; To the status it gets.
	From, To EventStatus
	// Set holds the attributes written with the move (attribute → value,
	// as the stored EventConfig names them: "drawnAt", "seed", ...).
	Set map[string]any
}

// Transitioner moves requests along Lifecycle: ingest, the worker, the
// allocator, the draw and the re-queues all do.
type Transitioner interface {
	// Transition applies t atomically (see Transition). Times on a request
	// only move forward: if t.At is not later than every time recorded on
	// the request (Request.LastChange), the store moves t.At, t.StartedAt
	// and t.FinishedAt to just after it, in t itself, and writes that.
	Transition(ctx context.Context, t *Transition) error
}

// IngestStore is what accepting a participation writes (Ingest).
type IngestStore interface {
	Transitioner
	// CreateRequest writes the IdempotencyLock and the Request (RECEIVED),
	// with its first StatusLog, in one transaction. If the lock exists it
	// writes nothing and returns the stored requestId with dup true.
	CreateRequest(ctx context.Context, r *Request, lockTTL int64) (existing string, dup bool, err error)
	// LockedRequest reads the user's IdempotencyLock on the event
	// (strongly consistent): the requestId it names and ok true, or ok
	// false if there is none.
	LockedRequest(ctx context.Context, eventID, userID string) (requestID string, ok bool, err error)
}

// WorkerStore is what deciding a delivered message reads and writes
// (Worker).
type WorkerStore interface {
	Transitioner
	// GetRequest reads a request. ErrRequestNotFound if missing.
	GetRequest(ctx context.Context, requestID string) (*Request, error)
	// RecordAttempt records a (see Attempt) on a request that is not
	// terminal. The last record wins: a redrive or re-queue sends a new
	// message whose receive count starts again at 1, so a lower count is
	// not necessarily an older record.
	RecordAttempt(ctx context.Context, a Attempt) error
}

// Attempt is a retryable failure of a delivery, recorded on its request
// (WorkerStore.RecordAttempt).
type Attempt struct {
	// RequestID is the request the delivery was for.
	RequestID string
	// Attempts is the receive count of the delivery that failed.
	Attempts int
	// Code and Message are the last error's code and message.
	Code, Message string
	// At is when it failed (epoch millis): the request's lastErrorAt.
	At int64
	// WorkerID, when set, is recorded as the request's workerId.
	WorkerID string
}

// RequestReader reads requests for their owners (and admins): Query.
type RequestReader interface {
	// GetRequest reads a request. ErrRequestNotFound if missing.
	GetRequest(ctx context.Context, requestID string) (*Request, error)
	// UserRequests pages through a user's requests, newest queuedAt first.
	// ErrCursor for a bad cursor.
	UserRequests(ctx context.Context, userID string, limit int, cursor string) ([]*Request, string, error)
}

// StatsReader is what counting an event's requests against its seats
// reads: Admin.EventStats and Operations.CheckCapacity.
type StatsReader interface {
	// GetCapacity reads an EventCapacity. ErrEventNotFound if missing.
	GetCapacity(ctx context.Context, eventID string) (*Capacity, error)
	// AllEventRequests iterates over all of an event's queued requests in
	// queuedAt order (oldest first).
	AllEventRequests(ctx context.Context, eventID string) iter.Seq2[*Request, error]
}

// AdminReader is what the admin reads of requests (Admin): an event's
// list and counts, a request's log, and the draw's entries.
type AdminReader interface {
	StatsReader
	// EventRequests pages through an event's requests as q says (see
	// EventRequestsQuery): first those not queued (see PendingRequests),
	// newest requestedAt first, then the queued ones, newest queuedAt
	// first.
	EventRequests(ctx context.Context, q EventRequestsQuery) ([]*Request, string, error)
	// PendingRequests iterates over an event's requests that are not
	// queued: RECEIVED, and FAILED_FINAL with resultCode
	// FAILED_INGEST_ENQUEUE (in no particular order).
	PendingRequests(ctx context.Context, eventID string) iter.Seq2[*Request, error]
	// Logs lists a request's StatusLog items, oldest first.
	Logs(ctx context.Context, requestID string) ([]*StatusLog, error)
}

// EventRequestsQuery is one page of an event's requests (AdminReader.
// EventRequests).
type EventRequestsQuery struct {
	// EventID is the event listed.
	EventID string
	// Status, when not "", keeps only the requests in it.
	Status Status
	// Limit bounds the page (1..MaxLimit).
	Limit int
	// Cursor is where the page starts: "" for the first, else the cursor
	// the previous page returned. ErrCursor for a bad one.
	Cursor string
}

// DrawStore is what a lottery draw writes beyond the event (Admin).
type DrawStore interface {
	Transitioner
	// SetPhase changes a PROCESSING request's uiPhase from → to.
	// *StateError if it is not PROCESSING in phase from.
	SetPhase(ctx context.Context, requestID string, from, to UIPhase) error
}

// SweepStore is what healing stranded requests and re-queueing failed
// enqueues read and write (Operations).
type SweepStore interface {
	Transitioner
	// GetRequest reads a request. ErrRequestNotFound if missing.
	GetRequest(ctx context.Context, requestID string) (*Request, error)
	// MarkRequeued sets a request's requeuedAt to at, on condition that it
	// is RECEIVED, was requested before `before` and was not requeued since
	// `before`. *StateError otherwise.
	MarkRequeued(ctx context.Context, requestID string, at, before int64) error
	// SweepCandidates iterates over the requests RECEIVED before `before`
	// and those FAILED_FINAL with resultCode FAILED_INGEST_ENQUEUE, of
	// every event, requested since `since` (epoch millis; on DynamoDB, by
	// day: Queries of the pending index from since's day on).
	SweepCandidates(ctx context.Context, before, since int64) iter.Seq2[*Request, error]
	// PendingRequests iterates over one event's RECEIVED and FAILED_FINAL /
	// FAILED_INGEST_ENQUEUE requests, whatever their age (see
	// AdminReader.PendingRequests).
	PendingRequests(ctx context.Context, eventID string) iter.Seq2[*Request, error]
	// ReopenFailedEnqueue applies r: it moves a FAILED_FINAL /
	// FAILED_INGEST_ENQUEUE request back to RECEIVED for an operator
	// re-queue, outside Lifecycle: it removes finishedAt, the failure
	// fields and its user-index keys (Transition.ListedAt), sets uiResult PENDING and requeuedAt = r.At, and writes the
	// StatusLog, in one transaction, on condition that its finishedAt is
	// still r.FinishedAt (the failure the caller read, not a later one):
	// *StateError if not. When r.OpenEvent is not "", the same transaction
	// checks that that event is OPEN: *EventStateError if not (the request
	// is checked first).
	ReopenFailedEnqueue(ctx context.Context, r Reopen) error
}

// Reopen is an operator's re-queue of a failed enqueue (SweepStore.
// ReopenFailedEnqueue).
type Reopen struct {
	// RequestID is the request reopened; EventID its event.
	RequestID, EventID string
	// FinishedAt is the failure's finishedAt as the caller read it: the
	// reopen is conditional on it.
	FinishedAt int64
	// At is the reopen's time (epoch millis): its StatusLog's and the
	// request's requeuedAt.
	At int64
	// OpenEvent, when not "", is an event that must be OPEN (a lottery
	// whose draw must not have started).
	OpenEvent string
}

// CapacityReader is what checking the capacity invariant of the open
// events reads beyond the events themselves (Operations).
type CapacityReader interface {
	StatsReader
	// OpenEvents iterates over the ids of the OPEN events of eventType
	// (on DynamoDB, a Query of one partition listing them).
	OpenEvents(ctx context.Context, eventType EventType) iter.Seq2[string, error]
}

// LockJobStore keeps the lock-expiry jobs and shortens locks
// (Operations).
type LockJobStore interface {
	// LockJobs iterates over the jobs not finished.
	LockJobs(ctx context.Context) iter.Seq2[*LockJob, error]
	// LeaseLockJob makes l.Owner the worker of l.EventID's job until
	// l.Until, on condition that the job is not finished and that its
	// lease is l.Owner's or over at l.Now; it returns the job as it is
	// then. ErrLeased if another worker holds it, ErrLockJobNotFound if it
	// is gone or finished.
	LeaseLockJob(ctx context.Context, l Lease) (*LockJob, error)
	// SaveLockJob records p (the owner's progress) and extends its lease;
	// p.Finished ends the job (its item expires a week later). ErrLeased
	// if p.Owner no longer holds the lease.
	SaveLockJob(ctx context.Context, p LockJobProgress) error
	// LockJobPage pages through an event's requests as EventRequests does,
	// with cursors that any process opens (a job keeps its cursor and
	// another worker may resume it). ErrCursor for a bad cursor.
	LockJobPage(ctx context.Context, eventID string, limit int, cursor string) ([]*Request, string, error)
	// ShortenLock sets the TTL of a lock to ttl if it has a later one (or
	// none). It reports whether it wrote; a lock already as short, or
	// gone, is not an error.
	ShortenLock(ctx context.Context, eventID, userID string, ttl int64) (bool, error)
}

// Lease asks for an event's lease (a lock job's, LockJobStore.
// LeaseLockJob; the arrival allocator's, AllocStore.AcquireAllocation).
type Lease struct {
	// EventID is the event whose lease is taken.
	EventID string
	// Owner is who takes it: a worker id, or an allocator's own id.
	Owner string
	// Now is the time (epoch millis) at which a lease held by another
	// must be over; Until is when the new lease ends.
	Now, Until int64
}

// LockJobProgress is a lock job's owner's progress (LockJobStore.
// SaveLockJob).
type LockJobProgress struct {
	// EventID is the job's event; Owner the worker holding its lease.
	EventID, Owner string
	// Cursor is where the walk stands ("" once it is over); Done counts
	// the requests seen so far.
	Cursor string
	Done   int64
	// Until extends the lease (epoch millis).
	Until int64
	// Finished ends the job.
	Finished bool
}

// AllocStore is what the arrival allocator reads and writes (Allocator).
type AllocStore interface {
	Transitioner
	// AcquireAllocation takes l.EventID's allocation lease for l.Owner
	// until l.Until if it is released or expired at l.Now, with the next
	// fencing token. It returns the capacity item after the write.
	// ErrAllocationHeld if another holds it; ErrEventNotFound if the event
	// has no capacity item.
	AcquireAllocation(ctx context.Context, l Lease) (*Capacity, error)
	// ReleaseAllocation ends owner's lease if it still holds it with fence.
	ReleaseAllocation(ctx context.Context, eventID, owner string, fence int64) error
	// UndecidedRequests iterates, in (queuedAt, requestId) order, over the
	// event's QUEUED and PROCESSING requests whose queuedAt is in
	// [from, before).
	UndecidedRequests(ctx context.Context, eventID string, from, before int64) iter.Seq2[*Request, error]
	// Allocate writes a in one transaction. ErrAllocationFenced if the
	// lease or the position changed; *StateError if a request is no
	// longer the candidate the allocator read.
	Allocate(ctx context.Context, a *Allocation) error
}

// LineStore is what a LineKeeper reads and writes.
type LineStore interface {
	LineReader
	// QueuedTimes returns the queuedAt of each of the event's index
	// entries (its queued requests, decided or not, every shard) queued in
	// [from, before), in no particular order.
	QueuedTimes(ctx context.Context, eventID string, from, before int64) ([]int64, error)
	// PutLine stores l if the stored line's Version is still l.Version
	// (none stored: 0), as Version l.Version+1; ErrLineMeasured if not.
	PutLine(ctx context.Context, l *Line) error
}

// LineReader reads what a request's place is made of: the event's line
// and its capacity item.
type LineReader interface {
	// GetLine reads the event's line: nil, nil if none was stored.
	GetLine(ctx context.Context, eventID string) (*Line, error)
	// GetCapacity reads an EventCapacity. ErrEventNotFound if missing.
	GetCapacity(ctx context.Context, eventID string) (*Capacity, error)
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
	// ListedAt, when non-zero and QueuedAt is zero, records the user
	// index's (GSI1) keys only, QAT#<ListedAt>#REQ#<requestId>, and never
	// the event's (GSI2): a failed enqueue (FAILED_INGEST_ENQUEUE) is
	// listed among its user's participations at its requestedAt, and stays
	// out of what the allocator, the lock jobs and the line read. Leaving
	// it by an operator's re-queue removes them (SweepStore.
	// ReopenFailedEnqueue), so that the re-queued request is listed at its
	// new queuedAt, even by a transition that keeps an existing one
	// (KeepQueuedAt).
	ListedAt int64
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

// HumanVerifier verifies a challenge provider's token (Cloudflare
// Turnstile, hCaptcha, reCAPTCHA: their siteverify) for Ingest, when the
// event asks for a human check. services/internal/humancheck implements
// it.
type HumanVerifier interface {
	// Verify asks the provider about token, from the client at remoteIP
	// ("" when unknown). An error means the provider could not be reached
	// or did not answer sensibly: no verdict.
	Verify(ctx context.Context, token, remoteIP string) (HumanVerdict, error)
}

// Queue sends participation messages: ingest's and the re-queues'
// (Ingest, Operations). sqsqueue implements it.
type Queue interface {
	// Send enqueues body.
	Send(ctx context.Context, body string) error
}

// DelayQueue sends a message again, delayed: an arrival candidate's
// message is continued this way while its request waits for the
// allocator (see Worker.Process). sqsqueue implements it.
type DelayQueue interface {
	// SendAfter enqueues body to be delivered no earlier than delay from
	// now (SQS DelaySeconds: whole seconds, rounded up, at most
	// MaxSendDelay).
	SendAfter(ctx context.Context, body string, delay time.Duration) error
}

// MaxSendDelay is the longest DelayQueue.SendAfter delay: SQS's
// DelaySeconds limit.
const MaxSendDelay = 15 * time.Minute

// DeadLetters is the admin's view of the dead-letter queue (Admin).
// sqsqueue implements it.
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
