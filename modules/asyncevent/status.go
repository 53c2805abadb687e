package asyncevent

import "slices"

// Status is a Request's backend status.
type Status string

// The request statuses.
const (
	StatusReceived    Status = "RECEIVED"
	StatusQueued      Status = "QUEUED"
	StatusProcessing  Status = "PROCESSING"
	StatusSucceeded   Status = "SUCCEEDED"
	StatusRejected    Status = "REJECTED"
	StatusFailedFinal Status = "FAILED_FINAL"
)

// Statuses lists every status in lifecycle order.
var Statuses = []Status{StatusReceived, StatusQueued, StatusProcessing, StatusSucceeded, StatusRejected, StatusFailedFinal}

// Lifecycle is the request state machine: each status and the statuses it
// may move to (a status with none is terminal). Besides the straight line
// RECEIVED → QUEUED → PROCESSING → SUCCEEDED | REJECTED | FAILED_FINAL it
// allows RECEIVED → PROCESSING (a worker takes a request whose ingest died
// after the send) and RECEIVED/QUEUED → FAILED_FINAL (enqueue failed).
// Stores apply it as conditional writes; an operator's re-queue of a failed
// enqueue (FAILED_FINAL → RECEIVED) is the one move outside it.
var Lifecycle = map[Status][]Status{
	StatusReceived:   {StatusQueued, StatusProcessing, StatusFailedFinal},
	StatusQueued:     {StatusProcessing, StatusFailedFinal},
	StatusProcessing: {StatusSucceeded, StatusRejected, StatusFailedFinal},
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if v == s {
			return true
		}
	}
	return false
}

// Terminal reports whether no transition leaves s.
func (s Status) Terminal() bool { return s.Valid() && len(Lifecycle[s]) == 0 }

// CanMoveTo reports whether s → to is a declared transition.
func (s Status) CanMoveTo(to Status) bool { return slices.Contains(Lifecycle[s], to) }

// EventType says how an event picks its participants.
type EventType string

// The event types.
const (
	FirstCome EventType = "FIRST_COME"
	Lottery   EventType = "LOTTERY"
)

// EventTypes lists every event type.
var EventTypes = []EventType{FirstCome, Lottery}

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool { return t == FirstCome || t == Lottery }

// UIPhase is the front-end phase of a LOTTERY request, or of a FIRST_COME
// request of an arrival-ordered event. It is a display aid, not a status.
type UIPhase string

// The lottery UI phases.
const (
	PhaseCollecting UIPhase = "COLLECTING"
	PhaseDrawing    UIPhase = "DRAWING"
	PhaseAnnounced  UIPhase = "ANNOUNCED"
	// PhaseAllocating: a FIRST_COME request of an arrival-ordered event
	// waits for the allocator, which decides in queuedAt order.
	PhaseAllocating UIPhase = "ALLOCATING"
	// PhaseAllocated: the allocator decided it.
	PhaseAllocated UIPhase = "ALLOCATED"
)

// UIPhases lists every UI phase Pacer writes (docs/contract.md says which
// are the seeds').
var UIPhases = []UIPhase{PhaseCollecting, PhaseDrawing, PhaseAnnounced, PhaseAllocating, PhaseAllocated}

// UIResult is the result as the front end shows it.
type UIResult string

// The UI results.
const (
	ResultPending  UIResult = "PENDING"
	ResultSuccess  UIResult = "SUCCESS"
	ResultRejected UIResult = "REJECTED"
	ResultFailed   UIResult = "FAILED"
)

// UIResults lists every UI result.
var UIResults = []UIResult{ResultPending, ResultSuccess, ResultRejected, ResultFailed}

// ResultCode is the precise outcome, for operators and analytics.
type ResultCode string

// The result codes. FAILED_* name the failure's origin.
const (
	CodeSuccess               ResultCode = "SUCCESS"
	CodeLotteryWin            ResultCode = "LOTTERY_WIN"
	CodeRejectedCapacity      ResultCode = "REJECTED_CAPACITY"
	CodeRejectedLotteryLose   ResultCode = "REJECTED_LOTTERY_LOSE"
	CodeRejectedLotteryClosed ResultCode = "REJECTED_LOTTERY_CLOSED"
	// FAILED_INGEST_ENQUEUE: the enqueue failed at ingest (RETRYABLE; an
	// operator's re-queue finishes it).
	CodeFailedIngestEnqueue ResultCode = "FAILED_INGEST_ENQUEUE"
	// FAILED_VALIDATION: the request cannot be decided as it is, e.g. its
	// event does not exist (NON_RETRYABLE).
	CodeFailedValidation ResultCode = "FAILED_VALIDATION"
	// FAILED_SERDE: its queue message could not be decoded (NON_RETRYABLE).
	CodeFailedSerde ResultCode = "FAILED_SERDE"
)

// ResultCodes lists every result code Pacer writes. The seeds' REJECTED_DUPLICATE
// and FAILED_WORKER are not among them: docs/contract.md says why.
var ResultCodes = []ResultCode{
	CodeSuccess, CodeLotteryWin, CodeRejectedCapacity, CodeRejectedLotteryLose, CodeRejectedLotteryClosed,
	CodeFailedIngestEnqueue, CodeFailedValidation, CodeFailedSerde,
}

// The errorCode values of a FAILED_FINAL request (the failure's short code
// beside its result code). Retryable failures record theirs in
// lastErrorCode instead (ErrorCode, CodeWorkerLost): AWS error codes,
// which are not Pacer's to list.
const (
	// ErrorUnknownEvent: the request's event does not exist
	// (FAILED_VALIDATION).
	ErrorUnknownEvent = "UNKNOWN_EVENT"
	// ErrorBadMessage: the request's queue message could not be decoded
	// (FAILED_SERDE).
	ErrorBadMessage = "BAD_MESSAGE"
	// ErrorIngestEnqueue: the enqueue failed at ingest; the seed names it
	// as the errorCode of FAILED_INGEST_ENQUEUE.
	ErrorIngestEnqueue = string(CodeFailedIngestEnqueue)
)

// ErrorCodes lists every errorCode Pacer writes on a FAILED_FINAL request.
var ErrorCodes = []string{ErrorIngestEnqueue, ErrorUnknownEvent, ErrorBadMessage}

// FailureClass says, of a failure, what can be done about it
// (docs/asyncevent.md, "Failure classes").
type FailureClass string

// The failure classes, the seed's two: they class a failure by its cause.
const (
	// Retryable: a transient cause (throttling, 5xx, a timeout, a
	// conflict, an unavailable queue); the request itself is sound and a
	// retry can succeed. A worker's retryable failure is retried by Pacer
	// itself and is not stored as failureClass (the request keeps its
	// status, QUEUED or PROCESSING, with attempts and lastError*; it
	// classes the RequestFailed events of attempts, docs/events.md). The
	// one FAILED_FINAL request that stores it is FAILED_INGEST_ENQUEUE:
	// nothing retries it by itself (the seed's G0 rule); an operator's
	// re-queue finishes it.
	Retryable FailureClass = "RETRYABLE"
	// NonRetryable: a FAILED_FINAL request that cannot succeed as it is
	// (FAILED_VALIDATION, FAILED_SERDE): a re-queue would fail again.
	NonRetryable FailureClass = "NON_RETRYABLE"
)

// FailureClasses lists every failure class.
var FailureClasses = []FailureClass{Retryable, NonRetryable}

// EventStatus is an EventConfig's status.
type EventStatus string

// The event statuses. A LOTTERY goes OPEN → DRAWING → ANNOUNCED; a
// FIRST_COME event is OPEN until an admin closes it early (CloseEvent).
const (
	EventOpen      EventStatus = "OPEN"
	EventClosed    EventStatus = "CLOSED"
	EventDrawing   EventStatus = "DRAWING"
	EventAnnounced EventStatus = "ANNOUNCED"
)

// EventStatuses lists every event status.
var EventStatuses = []EventStatus{EventOpen, EventClosed, EventDrawing, EventAnnounced}

// EventLifecycle is the EventConfig state machine: each event status and
// the statuses it may move to.
var EventLifecycle = map[EventStatus][]EventStatus{
	EventOpen:    {EventDrawing, EventClosed},
	EventDrawing: {EventAnnounced},
}

// FailedEnqueue reports whether a request of status and result code is one
// whose enqueue failed at ingest (FAILED_FINAL / FAILED_INGEST_ENQUEUE):
// an operator may re-queue it.
func FailedEnqueue(s Status, c ResultCode) bool {
	return s == StatusFailedFinal && c == CodeFailedIngestEnqueue
}

// NotQueued reports whether a request of status and result code has not
// been queued: RECEIVED, or its enqueue failed. Stores list and count such
// requests apart from the queued ones (on DynamoDB, the pending index).
func NotQueued(s Status, c ResultCode) bool {
	return s == StatusReceived || FailedEnqueue(s, c)
}
