package analytics

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/eventsink"
)

// Source is the events' source.
const Source = "pacer.asyncevent"

// SchemaVersion is the version of Detail; a change that is not backward
// compatible (a field removed or redefined) makes it 2.
const SchemaVersion = 1

// DetailType names an event.
type DetailType string

// The events.
const (
	ParticipationRequested DetailType = "ParticipationRequested"
	ParticipationProcessed DetailType = "ParticipationProcessed"
	DelayMeasured          DetailType = "DelayMeasured"
	RequestFailed          DetailType = "RequestFailed"
)

// DetailTypes lists every event.
var DetailTypes = []DetailType{ParticipationRequested, ParticipationProcessed, DelayMeasured, RequestFailed}

// Detail is an event's detail. Times are epoch milliseconds; a time not
// yet known is absent.
type Detail struct {
	SchemaVersion int `json:"schemaVersion"`
	// ID is the event's de-duplication key (EventBridge gives each
	// PutEvents entry an id of its own, so the key travels here).
	ID        string     `json:"id"`
	EventKind DetailType `json:"eventKind"`
	// OccurredAt is when the transition happened.
	OccurredAt int64 `json:"occurredAt"`

	RequestID string               `json:"requestId"`
	EventID   string               `json:"eventId"`
	EventType asyncevent.EventType `json:"eventType"`
	Status    asyncevent.Status    `json:"status"`
	UserHash  string               `json:"userHash,omitempty"`

	UIResult     asyncevent.UIResult     `json:"uiResult,omitempty"`
	ResultCode   asyncevent.ResultCode   `json:"resultCode,omitempty"`
	FailureClass asyncevent.FailureClass `json:"failureClass,omitempty"`
	ErrorCode    string                  `json:"errorCode,omitempty"`
	Attempts     int                     `json:"attempts"`
	// DeadLettered says the failed attempt was the last processing receive
	// (asyncevent.DeadLetterReceive), or the loss of the worker holding it
	// recorded on the receive after (asyncevent.CodeWorkerLost): the message
	// goes to the DLQ.
	DeadLettered bool `json:"deadLettered"`

	RequestedAt int64 `json:"requestedAt"`
	QueuedAt    int64 `json:"queuedAt,omitempty"`
	StartedAt   int64 `json:"startedAt,omitempty"`
	FinishedAt  int64 `json:"finishedAt,omitempty"`
	// QueueDelayMs is startedAt − queuedAt, E2EDelayMs finishedAt −
	// queuedAt, when both times are known.
	QueueDelayMs *int64 `json:"queueDelayMs,omitempty"`
	E2EDelayMs   *int64 `json:"e2eDelayMs,omitempty"`

	// WorkerID names the worker process that made the request's last
	// worker transition (asyncevent.Request.WorkerID): for a decision, the
	// worker (or arrival allocator) that decided it. Absent for a request
	// no worker has moved (ParticipationRequested, an ingest failure).
	WorkerID string `json:"workerId,omitempty"`
}

// Mapper derives events from request changes.
type Mapper struct {
	// UserKey, when set, adds userHash = hex(HMAC-SHA256(UserKey, userId)).
	UserKey []byte
	// MaxReceives is the DLQ's maxReceiveCount: a retryable failure at
	// attempt asyncevent.DeadLetterReceive(MaxReceives) or later is
	// deadLettered (0: never).
	MaxReceives int
}

// Events returns the events of one change of a request: old is the
// request before (nil when it was created), cur after (nil when it was
// deleted, which means no event).
func (m Mapper) Events(old, cur *asyncevent.Request) ([]eventsink.Envelope, error) {
	if cur == nil {
		return nil, nil
	}
	var prev asyncevent.Status
	if old != nil {
		prev = old.Status
	}
	var out []eventsink.Envelope
	add := func(t DetailType, at int64, edit func(*Detail)) error {
		d := m.detail(t, cur, at)
		if edit != nil {
			edit(&d)
		}
		ev, err := eventsink.New(d.ID, Source, string(t), time.UnixMilli(at), &d)
		if err == nil {
			out = append(out, ev)
		}
		return err
	}
	if old == nil {
		if err := add(ParticipationRequested, cur.RequestedAt, nil); err != nil {
			return nil, err
		}
	}
	if cur.Status.Terminal() && prev != cur.Status {
		at := cur.FinishedAt
		if at == 0 {
			at = cur.LastChange()
		}
		if err := add(ParticipationProcessed, at, nil); err != nil {
			return nil, err
		}
		if cur.QueuedAt != 0 && cur.StartedAt != 0 && cur.FinishedAt != 0 {
			if err := add(DelayMeasured, at, nil); err != nil {
				return nil, err
			}
		}
		if cur.Status == asyncevent.StatusFailedFinal {
			err := add(RequestFailed, at, func(d *Detail) {
				if d.FailureClass == "" {
					d.FailureClass = asyncevent.NonRetryable
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if !cur.Status.Terminal() && cur.LastErrorAt != 0 && (old == nil || old.LastErrorAt != cur.LastErrorAt) {
		err := add(RequestFailed, cur.LastErrorAt, func(d *Detail) {
			d.FailureClass, d.ErrorCode = asyncevent.Retryable, cur.LastErrorCode
			d.DeadLettered = m.MaxReceives > 0 && cur.Attempts >= asyncevent.DeadLetterReceive(m.MaxReceives)
			// Attempts are what distinguishes one retryable failure from
			// the next: they are part of the id.
			d.ID = id(cur.RequestID, RequestFailed, string(cur.Status)+"#"+strconv.Itoa(cur.Attempts), cur.LastErrorAt)
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// detail fills the fields every event has.
func (m Mapper) detail(t DetailType, r *asyncevent.Request, at int64) Detail {
	d := Detail{
		SchemaVersion: SchemaVersion, ID: id(r.RequestID, t, string(r.Status), at), EventKind: t, OccurredAt: at,
		RequestID: r.RequestID, EventID: r.EventID, EventType: r.EventType, Status: r.Status,
		UIResult: r.UIResult, ResultCode: r.ResultCode, FailureClass: r.FailureClass, ErrorCode: r.ErrorCode,
		Attempts: r.Attempts, RequestedAt: r.RequestedAt, QueuedAt: r.QueuedAt, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		WorkerID: r.WorkerID,
	}
	if r.QueuedAt != 0 && r.StartedAt != 0 {
		v := r.QueueDelay()
		d.QueueDelayMs = &v
	}
	if r.QueuedAt != 0 && r.FinishedAt != 0 {
		v := r.E2EDelay()
		d.E2EDelayMs = &v
	}
	if len(m.UserKey) > 0 && r.UserID != "" {
		h := hmac.New(sha256.New, m.UserKey)
		h.Write([]byte(r.UserID))
		d.UserHash = hex.EncodeToString(h.Sum(nil))
	}
	return d
}

// id is the deterministic event id of (request, event, status, time): 32
// hex digits of a SHA-256.
func id(requestID string, t DetailType, status string, at int64) string {
	sum := sha256.Sum256([]byte(requestID + "\x00" + string(t) + "\x00" + status + "\x00" + strconv.FormatInt(at, 10)))
	return hex.EncodeToString(sum[:16])
}
