package dynamostore

import (
	"iter"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// The item types below hold the stored attributes (the SDK adds PK, SK and
// EntityType). RequestItem, EventConfigItem, CapacityItem and StatusLogItem
// have their domain type's fields in the same order, so each converts to
// the other with a Go conversion; the compiler refuses it as soon as the two
// differ.

// RequestItem is a Request item (REQ#<requestId> / META). Transition adds
// the GSI1 and GSI2 keys when the request is queued, and the GSI1 keys
// alone when its enqueue fails.
type RequestItem struct {
	RequestID string               `dynamodbav:"requestId"`
	EventID   string               `dynamodbav:"eventId"`
	UserID    string               `dynamodbav:"userId"`
	EventType asyncevent.EventType `dynamodbav:"eventType"`
	Status    asyncevent.Status    `dynamodbav:"status"`

	UIPhase         asyncevent.UIPhase    `dynamodbav:"uiPhase,omitempty"`
	UIResult        asyncevent.UIResult   `dynamodbav:"uiResult,omitempty"`
	ResultCode      asyncevent.ResultCode `dynamodbav:"resultCode,omitempty"`
	LotteryCutoffAt int64                 `dynamodbav:"lotteryCutoffAt,omitempty"`
	AnnouncedAt     int64                 `dynamodbav:"announcedAt,omitempty"`

	RequestedAt int64 `dynamodbav:"requestedAt"`
	QueuedAt    int64 `dynamodbav:"queuedAt,omitempty"`
	StartedAt   int64 `dynamodbav:"startedAt,omitempty"`
	FinishedAt  int64 `dynamodbav:"finishedAt,omitempty"`

	FailureClass asyncevent.FailureClass `dynamodbav:"failureClass,omitempty"`
	ErrorCode    string                  `dynamodbav:"errorCode,omitempty"`
	ErrorMessage string                  `dynamodbav:"errorMessage,omitempty"`

	Attempts         int    `dynamodbav:"attempts,omitempty"`
	LastErrorCode    string `dynamodbav:"lastErrorCode,omitempty"`
	LastErrorMessage string `dynamodbav:"lastErrorMessage,omitempty"`
	LastErrorAt      int64  `dynamodbav:"lastErrorAt,omitempty"`

	RequeuedAt int64 `dynamodbav:"requeuedAt,omitempty"`

	IdempotencyKey string `dynamodbav:"idempotencyKey"`

	LotteryTicket string `dynamodbav:"lotteryTicket,omitempty"`
	LotteryRank   int    `dynamodbav:"lotteryRank,omitempty"`

	WorkerID string `dynamodbav:"workerId,omitempty"`

	TTL int64 `dynamodbav:"ttl,omitempty"`
}

// LockItem is an IdempotencyLock item (IDEMP#<eventId>#<userId> / LOCK): it
// makes a user's participation in an event unique and names its request.
type LockItem struct {
	EventID   string `dynamodbav:"eventId"`
	UserID    string `dynamodbav:"userId"`
	RequestID string `dynamodbav:"requestId"`
	CreatedAt int64  `dynamodbav:"createdAt"`
	TTL       int64  `dynamodbav:"ttl,omitempty"`
}

// EventConfigItem is an EventConfig item (EVENT#<eventId> / CONFIG).
type EventConfigItem struct {
	EventID   string                 `dynamodbav:"eventId"`
	EventType asyncevent.EventType   `dynamodbav:"eventType"`
	Status    asyncevent.EventStatus `dynamodbav:"status"`
	Title     string                 `dynamodbav:"title,omitempty"`

	OpensAt  int64 `dynamodbav:"opensAt,omitempty"`
	ClosesAt int64 `dynamodbav:"closesAt,omitempty"`

	CapacityTotal int64                  `dynamodbav:"capacityTotal,omitempty"`
	Ordering      asyncevent.Ordering    `dynamodbav:"ordering,omitempty"`
	IndexShards   int                    `dynamodbav:"indexShards,omitempty"`
	HumanCheck    asyncevent.HumanPolicy `dynamodbav:"humanCheck,omitempty"`
	AddressLimit  asyncevent.Budget      `dynamodbav:"addressLimit,omitempty"`

	LotteryCutoffAt int64  `dynamodbav:"lotteryCutoffAt,omitempty"`
	Winners         int    `dynamodbav:"winners,omitempty"`
	AnnouncedAt     int64  `dynamodbav:"announcedAt,omitempty"`
	SeedCommitment  string `dynamodbav:"seedCommitment,omitempty"`
	Seed            string `dynamodbav:"seed,omitempty"`

	EntryCount int64 `dynamodbav:"entryCount,omitempty"`

	DrawStartedAt int64 `dynamodbav:"drawStartedAt,omitempty"`
	DrawnAt       int64 `dynamodbav:"drawnAt,omitempty"`
	DrawEntries   int   `dynamodbav:"drawEntries,omitempty"`
	DrawWinners   int   `dynamodbav:"drawWinners,omitempty"`

	CreatedAt int64 `dynamodbav:"createdAt"`
	UpdatedAt int64 `dynamodbav:"updatedAt,omitempty"`
	TTL       int64 `dynamodbav:"ttl,omitempty"`
}

// CapacityItem is an EventCapacity item (EVENT#<eventId> / CAPACITY).
type CapacityItem struct {
	EventID           string `dynamodbav:"eventId"`
	CapacityTotal     int64  `dynamodbav:"capacityTotal"`
	CapacityRemaining int64  `dynamodbav:"capacityRemaining"`
	UpdatedAt         int64  `dynamodbav:"updatedAt"`

	AllocOwner      string `dynamodbav:"allocOwner,omitempty"`
	AllocLeaseUntil int64  `dynamodbav:"allocLeaseUntil,omitempty"`
	AllocFence      int64  `dynamodbav:"allocFence,omitempty"`
	AllocQueuedAt   int64  `dynamodbav:"allocQueuedAt,omitempty"`
	AllocRequestID  string `dynamodbav:"allocRequestId,omitempty"`
	AllocLate       int64  `dynamodbav:"allocLate,omitempty"`

	TTL int64 `dynamodbav:"ttl,omitempty"` // the event's
}

// StatusLogItem is a StatusLog item (REQ#<requestId> /
// LOG#<occurredAt>#<toStatus>).
type StatusLogItem struct {
	RequestID  string            `dynamodbav:"requestId"`
	FromStatus asyncevent.Status `dynamodbav:"fromStatus"`
	ToStatus   asyncevent.Status `dynamodbav:"toStatus"`
	OccurredAt int64             `dynamodbav:"occurredAt"`
	Message    string            `dynamodbav:"message,omitempty"`
	TTL        int64             `dynamodbav:"ttl,omitempty"`
}

func requestItem(r *asyncevent.Request) *RequestItem { it := RequestItem(*r); return &it }

func (it *RequestItem) request() *asyncevent.Request {
	r := asyncevent.Request(*it)
	if r.FailureClass == legacyRequeueable {
		r.FailureClass = asyncevent.Retryable
	}
	return &r
}

// legacyRequeueable is the failureClass Pacer stored on FAILED_INGEST_ENQUEUE
// requests before it returned to the seed's RETRYABLE (docs/contract.md):
// read as RETRYABLE, never written.
const legacyRequeueable asyncevent.FailureClass = "REQUEUEABLE"

func eventConfigItem(c *asyncevent.EventConfig) *EventConfigItem {
	it := EventConfigItem(*c)
	return &it
}

func (it *EventConfigItem) eventConfig() *asyncevent.EventConfig {
	c := asyncevent.EventConfig(*it)
	return &c
}

func (it *CapacityItem) capacity() *asyncevent.Capacity { c := asyncevent.Capacity(*it); return &c }

func (it *StatusLogItem) statusLog() *asyncevent.StatusLog { l := asyncevent.StatusLog(*it); return &l }

// requests converts a sequence of Request items to domain requests.
func requests(items iter.Seq2[*RequestItem, error]) iter.Seq2[*asyncevent.Request, error] {
	return func(yield func(*asyncevent.Request, error) bool) {
		for it, err := range items {
			var r *asyncevent.Request
			if it != nil {
				r = it.request()
			}
			if !yield(r, err) {
				return
			}
		}
	}
}
