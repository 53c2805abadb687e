package asyncevent

import (
	"encoding/json"
	"fmt"
	"time"
)

// Message is the body of a participation's queue message.
type Message struct {
	V         int       `json:"v"`
	RequestID string    `json:"requestId"`
	EventID   string    `json:"eventId"`
	UserID    string    `json:"userId"`
	EventType EventType `json:"eventType"`
	// Waits counts the continuations of an arrival candidate's message:
	// how many times it was acked and sent again while its request waited
	// for the allocator (WorkerConfig.CandidateWaits). 0 on ingest's message.
	Waits int `json:"waits,omitempty"`
}

// MessageVersion is the version of the messages this Pacer writes and
// reads (Message.V).
const MessageVersion = 1

// Encode returns the message's JSON body.
func (m Message) Encode() string {
	m.V = MessageVersion
	b, _ := json.Marshal(m) // cannot fail: strings only
	return string(b)
}

// DecodeMessage parses and validates a message body. A body that does not
// parse or validate is ErrBadMessage: retrying cannot fix it.
func DecodeMessage(body string) (Message, error) {
	var m Message
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return m, fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	switch {
	case m.V != MessageVersion:
		return m, fmt.Errorf("%w: version %d", ErrBadMessage, m.V)
	case !ValidID(m.RequestID) || !ValidID(m.EventID) || !ValidUserID(m.UserID):
		return m, fmt.Errorf("%w: bad ids", ErrBadMessage)
	case !m.EventType.Valid():
		return m, fmt.Errorf("%w: event type %q", ErrBadMessage, m.EventType)
	case m.Waits < 0:
		return m, fmt.Errorf("%w: waits %d", ErrBadMessage, m.Waits)
	}
	return m, nil
}

// Delivery is one receipt of a queue message by a worker.
type Delivery struct {
	Body string
	// ReceiveCount is SQS's ApproximateReceiveCount (1 on the first
	// delivery).
	ReceiveCount int
	// SentAt is when SQS accepted the message (SentTimestamp): the time the
	// enqueue succeeded, used as queuedAt when ingest died before recording
	// it.
	SentAt time.Time
}
