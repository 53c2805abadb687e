package asyncevent

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Retention of the items that expire (the table's "ttl" attribute holds
// epoch seconds).
const (
	RequestTTL   = 90 * 24 * time.Hour // Request: 90 days after it was requested
	LockTTLAfter = 7 * 24 * time.Hour  // IdempotencyLock: event end + 7 days
	LogTTL       = 30 * 24 * time.Hour // StatusLog: 30 days after the transition
)

// MaxErrorMessage bounds errorMessage, in bytes (so at most 256 characters).
const MaxErrorMessage = 256

// IDPattern is what event and request ids may look like: 1 to 64 letters,
// digits, '_' or '-'. (User ids are not ours to choose: see ValidUserID.)
const IDPattern = `^[A-Za-z0-9_-]{1,64}$`

var idRE = regexp.MustCompile(IDPattern)

// ValidID reports whether an event or request id matches IDPattern.
func ValidID(id string) bool { return idRE.MatchString(id) }

// MaxUserID bounds a user id in bytes.
const MaxUserID = 255

// ValidUserID reports whether id can be a user id: 1 to MaxUserID bytes of
// valid UTF-8 with no control characters and no noncharacters (U+FFFE,
// U+FFFF: SQS refuses them in a message). User ids are the verified token's
// sub, in whatever format the identity provider uses ("auth0|5f7c…",
// "google-oauth2|123", an email address), so '|', '@', '#' and '%' are
// allowed: every key that holds a user id (IDEMP#<eventId>#<userId>,
// USER#<userId>) escapes '#' and '%' reversibly, so distinct ids give
// distinct keys. The token verifier (sdk/auth.ValidSubject) applies the
// same rule, so a verified user is always a valid one.
func ValidUserID(id string) bool {
	return id != "" && len(id) <= MaxUserID && utf8.ValidString(id) &&
		!strings.ContainsFunc(id, func(r rune) bool { return unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF })
}

// Request is one participation request (REQ#<requestId> / META). Times are
// epoch milliseconds; zero means "not yet".
type Request struct {
	RequestID string    `dynamodbav:"requestId"`
	EventID   string    `dynamodbav:"eventId"`
	UserID    string    `dynamodbav:"userId"`
	EventType EventType `dynamodbav:"eventType"`
	Status    Status    `dynamodbav:"status"`

	UIPhase         UIPhase    `dynamodbav:"uiPhase,omitempty"`
	UIResult        UIResult   `dynamodbav:"uiResult,omitempty"`
	ResultCode      ResultCode `dynamodbav:"resultCode,omitempty"`
	LotteryCutoffAt int64      `dynamodbav:"lotteryCutoffAt,omitempty"`
	AnnouncedAt     int64      `dynamodbav:"announcedAt,omitempty"`

	RequestedAt int64 `dynamodbav:"requestedAt"`
	QueuedAt    int64 `dynamodbav:"queuedAt,omitempty"`
	StartedAt   int64 `dynamodbav:"startedAt,omitempty"`
	FinishedAt  int64 `dynamodbav:"finishedAt,omitempty"`

	FailureClass FailureClass `dynamodbav:"failureClass,omitempty"`
	ErrorCode    string       `dynamodbav:"errorCode,omitempty"`
	ErrorMessage string       `dynamodbav:"errorMessage,omitempty"`

	// Attempts is how many times a worker received the request's message
	// (SQS ApproximateReceiveCount) when it last worked on it; LastError*
	// describe the last retryable failure.
	Attempts         int    `dynamodbav:"attempts,omitempty"`
	LastErrorCode    string `dynamodbav:"lastErrorCode,omitempty"`
	LastErrorMessage string `dynamodbav:"lastErrorMessage,omitempty"`
	LastErrorAt      int64  `dynamodbav:"lastErrorAt,omitempty"`

	// RequeuedAt is when the request was last enqueued again: stranded in
	// RECEIVED (Service.GetRequest, the sweep) or re-opened by an operator
	// after its enqueue failed (Service.RequeueFailed).
	RequeuedAt int64 `dynamodbav:"requeuedAt,omitempty"`

	// IdempotencyKey is the key of the request's IdempotencyLock,
	// IDEMP#<eventId>#<userId>.
	IdempotencyKey string `dynamodbav:"idempotencyKey"`

	// LotteryTicket is hex(SHA-256(seed || requestId)) and LotteryRank the
	// 1-based rank, set by the draw.
	LotteryTicket string `dynamodbav:"lotteryTicket,omitempty"`
	LotteryRank   int    `dynamodbav:"lotteryRank,omitempty"`

	TTL int64 `dynamodbav:"ttl,omitempty"`
}

// LastChange is the latest time recorded on r (epoch millis), including
// when it was last re-queued. A transition of r is timed after it: times on
// a request only move forward.
func (r *Request) LastChange() int64 {
	return max(r.RequestedAt, r.QueuedAt, r.StartedAt, r.FinishedAt, r.RequeuedAt)
}

// QueueDelay is startedAt − queuedAt, or 0 when either is unknown.
func (r *Request) QueueDelay() int64 { return delay(r.QueuedAt, r.StartedAt) }

// E2EDelay is finishedAt − queuedAt, or 0 when either is unknown.
func (r *Request) E2EDelay() int64 { return delay(r.QueuedAt, r.FinishedAt) }

func delay(from, to int64) int64 {
	if from == 0 || to == 0 || to < from {
		return 0
	}
	return to - from
}

// Lock is the IdempotencyLock (IDEMP#<eventId>#<userId> / LOCK).
type Lock struct {
	EventID   string `dynamodbav:"eventId"`
	UserID    string `dynamodbav:"userId"`
	RequestID string `dynamodbav:"requestId"`
	CreatedAt int64  `dynamodbav:"createdAt"`
	TTL       int64  `dynamodbav:"ttl,omitempty"`
}

// EventConfig is an event's settings (EVENT#<eventId> / CONFIG).
type EventConfig struct {
	EventID   string      `dynamodbav:"eventId"`
	EventType EventType   `dynamodbav:"eventType"`
	Status    EventStatus `dynamodbav:"status"`
	Title     string      `dynamodbav:"title,omitempty"`

	// OpensAt and ClosesAt bound when participations are accepted
	// (FIRST_COME; a LOTTERY closes at LotteryCutoffAt).
	OpensAt  int64 `dynamodbav:"opensAt,omitempty"`
	ClosesAt int64 `dynamodbav:"closesAt,omitempty"`

	// CapacityTotal is the FIRST_COME capacity N.
	CapacityTotal int64 `dynamodbav:"capacityTotal,omitempty"`

	// LOTTERY settings.
	LotteryCutoffAt int64 `dynamodbav:"lotteryCutoffAt,omitempty"`
	Winners         int   `dynamodbav:"winners,omitempty"`
	AnnouncedAt     int64 `dynamodbav:"announcedAt,omitempty"`
	// SeedCommitment is hex(SHA-256(seed)), fixed at creation.
	SeedCommitment string `dynamodbav:"seedCommitment,omitempty"`
	// Seed is the hex draw seed. When the server generated it, it is stored
	// here from creation but only shown once the draw has started.
	Seed string `dynamodbav:"seed,omitempty"`

	// EntryCount is how many requests became lottery entries (COLLECTING),
	// counted in the same transaction that admitted each; frozen once the
	// event leaves OPEN.
	EntryCount int64 `dynamodbav:"entryCount,omitempty"`

	// Draw bookkeeping.
	DrawStartedAt int64 `dynamodbav:"drawStartedAt,omitempty"`
	DrawnAt       int64 `dynamodbav:"drawnAt,omitempty"`
	DrawEntries   int   `dynamodbav:"drawEntries,omitempty"`
	DrawWinners   int   `dynamodbav:"drawWinners,omitempty"`

	CreatedAt int64 `dynamodbav:"createdAt"`
	UpdatedAt int64 `dynamodbav:"updatedAt,omitempty"`
}

// EndsAt is when the event is over, for the IdempotencyLock's TTL: the
// close (FIRST_COME) or the announcement or cutoff (LOTTERY).
func (c *EventConfig) EndsAt() int64 {
	if c.EventType == Lottery {
		return max(c.AnnouncedAt, c.LotteryCutoffAt)
	}
	return c.ClosesAt
}

// RevealedSeed is the seed once the draw has started, else "".
func (c *EventConfig) RevealedSeed() string {
	if c.Status == EventDrawing || c.Status == EventAnnounced {
		return c.Seed
	}
	return ""
}

// Capacity is a FIRST_COME event's seat counter (EVENT#<eventId> /
// CAPACITY).
type Capacity struct {
	EventID           string `dynamodbav:"eventId"`
	CapacityTotal     int64  `dynamodbav:"capacityTotal"`
	CapacityRemaining int64  `dynamodbav:"capacityRemaining"`
	UpdatedAt         int64  `dynamodbav:"updatedAt"`
}

// StatusLog is one status transition of a request (REQ#<requestId> /
// LOG#<occurredAt>#<toStatus>).
type StatusLog struct {
	RequestID  string `dynamodbav:"requestId"`
	FromStatus Status `dynamodbav:"fromStatus"`
	ToStatus   Status `dynamodbav:"toStatus"`
	OccurredAt int64  `dynamodbav:"occurredAt"`
	Message    string `dynamodbav:"message,omitempty"`
	TTL        int64  `dynamodbav:"ttl,omitempty"`
}

// Millis returns t as epoch milliseconds.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !validTail(s) {
		s = s[:len(s)-1]
	}
	return s
}

func validTail(s string) bool {
	for i := len(s) - 1; i >= 0 && i >= len(s)-4; i-- {
		c := s[i]
		if c < 0x80 {
			return true
		}
		if c >= 0xC0 { // a lead byte: the rune must be complete
			need := 2
			if c >= 0xE0 {
				need = 3
			}
			if c >= 0xF0 {
				need = 4
			}
			return len(s)-i == need
		}
	}
	return false
}
