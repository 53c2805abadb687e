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
	// Request: 90 days after it was requested, or after its event's end
	// if that is later (EventConfig.TTL), so that no request expires
	// while its event could still decide, count or name it.
	RequestTTL   = 90 * 24 * time.Hour
	LockTTLAfter = 7 * 24 * time.Hour // IdempotencyLock: event end + 7 days
	// StatusLog: 30 days after the transition, or after its event's end
	// if that is later, so that the log of a request still waiting for
	// its event (a lottery entry before its draw) is kept whole.
	LogTTL = 30 * 24 * time.Hour
	// MaxEventLifetime is how long a FIRST_COME event created without
	// closesAt stays open: it closes MaxEventLifetime after it opens (its
	// opensAt, or its creation), as long as a Request is kept. Every event
	// thus has an end, and every IdempotencyLock a TTL a week after it.
	MaxEventLifetime = 90 * 24 * time.Hour
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

// Request is one participation request. Times are epoch milliseconds;
// zero means "not yet".
type Request struct {
	RequestID string
	EventID   string
	UserID    string
	EventType EventType
	Status    Status

	UIPhase         UIPhase
	UIResult        UIResult
	ResultCode      ResultCode
	LotteryCutoffAt int64
	AnnouncedAt     int64

	RequestedAt int64
	QueuedAt    int64
	StartedAt   int64
	FinishedAt  int64

	FailureClass FailureClass
	ErrorCode    string
	ErrorMessage string

	// Attempts is how many times a worker received the request's message
	// (SQS ApproximateReceiveCount) when it last worked on it; LastError*
	// describe the last retryable failure.
	Attempts         int
	LastErrorCode    string
	LastErrorMessage string
	LastErrorAt      int64

	// RequeuedAt is when the request was last enqueued again: stranded in
	// RECEIVED (Query.GetRequest, the sweep) or re-opened by an operator
	// after its enqueue failed (Operations.RequeueFailed).
	RequeuedAt int64

	// IdempotencyKey is the key of the request's IdempotencyLock,
	// IDEMP#<eventId>#<userId>.
	IdempotencyKey string

	// LotteryTicket is hex(SHA-256(seed || requestId)) and LotteryRank the
	// 1-based rank, set by the draw.
	LotteryTicket string
	LotteryRank   int

	// WorkerID names the worker process that made the request's last
	// worker transition (WorkerConfig.WorkerID): its start, its decision, an
	// arrival allocator's decision, a recorded retryable failure. Ingest
	// and operator writes leave it as it is.
	WorkerID string

	TTL int64
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

// EventConfig is an event's settings.
type EventConfig struct {
	EventID   string
	EventType EventType
	Status    EventStatus
	Title     string

	// OpensAt and ClosesAt bound when participations are accepted
	// (FIRST_COME; a LOTTERY closes at LotteryCutoffAt).
	OpensAt  int64
	ClosesAt int64

	// CapacityTotal is the FIRST_COME capacity N.
	CapacityTotal int64
	// Ordering is how a FIRST_COME event picks its winners (see Ordering).
	Ordering Ordering
	// IndexShards (FIRST_COME) is how many partitions of the event index
	// (GSI2) the event's requests are written over: 0 or 1 is the default
	// one partition per event (EVENT#<eventId>, docs/asyncevent.md); N > 1 spreads them over N
	// (EVENT#<eventId>#<shard>, the shard a stable hash of the request id,
	// docs/capacity.md), and readers merge the N back in index order.
	// Fixed at creation.
	IndexShards int
	// HumanCheck, when not "", makes every participation carry a token a
	// challenge provider passes, and is the policy when the provider cannot
	// be reached (see HumanPolicy). Fixed at creation.
	HumanCheck HumanPolicy
	// AddressLimit is the event's own budget of participations per client
	// address (EventLimits.ParticipationsPerAddress; "" none). Fixed at
	// creation.
	AddressLimit Budget

	// LOTTERY settings.
	LotteryCutoffAt int64
	Winners         int
	AnnouncedAt     int64
	// SeedCommitment is hex(SHA-256(seed)), fixed at creation.
	SeedCommitment string
	// Seed is the hex draw seed. When the server generated it, it is stored
	// here from creation but only shown once the draw has started.
	Seed string

	// EntryCount is how many requests became lottery entries (COLLECTING),
	// counted in the same transaction that admitted each; frozen once the
	// event leaves OPEN.
	EntryCount int64

	// Draw bookkeeping.
	DrawStartedAt int64
	DrawnAt       int64
	DrawEntries   int
	DrawWinners   int

	CreatedAt int64
	UpdatedAt int64
	// TTL is when the event's items expire (epoch seconds): RequestTTL
	// after its end, so it outlives every request made before that end.
	TTL int64
}

// EndsAt is when the event is over, for the IdempotencyLock's TTL: the
// close (FIRST_COME) or the announcement or cutoff (LOTTERY). A FIRST_COME
// event stored without closesAt (created before every event got one) ends
// MaxEventLifetime after it opened, and takes no participation after it.
func (c *EventConfig) EndsAt() int64 {
	if c.EventType == Lottery {
		return max(c.AnnouncedAt, c.LotteryCutoffAt)
	}
	if c.ClosesAt == 0 {
		return max(c.OpensAt, c.CreatedAt) + MaxEventLifetime.Milliseconds()
	}
	return c.ClosesAt
}

// requestTTL is the TTL (epoch seconds) of a request of the event
// requested at (epoch millis): RequestTTL after the later of at and the
// event's end. It is never earlier than the event's own TTL, which counts
// RequestTTL from the end too.
func (c *EventConfig) requestTTL(at int64) int64 {
	return (max(at, c.EndsAt()) + RequestTTL.Milliseconds()) / 1000
}

// RevealedSeed is the seed once the draw has started, else "".
func (c *EventConfig) RevealedSeed() string {
	if c.Status == EventDrawing || c.Status == EventAnnounced {
		return c.Seed
	}
	return ""
}

// Capacity is a FIRST_COME event's seat counter.
type Capacity struct {
	EventID           string
	CapacityTotal     int64
	CapacityRemaining int64
	UpdatedAt         int64

	// The arrival allocator's state (Ordering arrival): the lease holder,
	// until when it holds it, the fencing token (incremented by every new
	// holder; each allocation is conditional on it), the position of the
	// last request decided, and how many requests arrived behind it.
	AllocOwner      string
	AllocLeaseUntil int64
	AllocFence      int64
	AllocQueuedAt   int64
	AllocRequestID  string
	AllocLate       int64

	TTL int64 // the event's (EventConfig.TTL)
}

// StatusLog is one status transition of a request.
type StatusLog struct {
	RequestID  string
	FromStatus Status
	ToStatus   Status
	OccurredAt int64
	Message    string
	TTL        int64
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
