package asyncevent

import (
	"context"
	"fmt"
	"time"
)

// Query answers a request's owner (and admins): a request, a user's
// requests, and when a poll is worth making again. The API process builds
// it; it only reads, and is safe for concurrent use.
type Query struct {
	cfg    QueryConfig
	places places
}

// QueryConfig configures a Query.
type QueryConfig struct {
	// Requests reads requests.
	Requests RequestReader
	// Lateness makes PollAfter's hint: an arrival candidate is decided no
	// sooner than Lateness.Max after its queuedAt. The same in every
	// process (see Lateness).
	Lateness Lateness
	// Lines, if set, reads the events' lines and capacity items for Place;
	// Events reads the events (through Cache, the process's). LineEvery
	// is how long a read of them is kept (default DefaultLineEvery).
	Lines     LineReader
	Events    EventReader
	Cache     *EventCache
	LineEvery time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// withDefaults returns c with every unset field at its default.
func (c QueryConfig) withDefaults() QueryConfig {
	c.Lateness = c.Lateness.withDefaults()
	if c.LineEvery <= 0 {
		c.LineEvery = DefaultLineEvery
	}
	if c.Cache == nil {
		c.Cache = NewEventCache(0)
	}
	c.Now = defaultNow(c.Now)
	return c
}

// NewQuery returns a Query over cfg.Requests.
func NewQuery(cfg QueryConfig) *Query {
	return &Query{cfg: cfg.withDefaults()}
}

// Caller is who asks: the verified user id and whether they are an admin.
type Caller struct {
	UserID string
	Admin  bool
}

// GetRequest returns a request to its owner or an admin. To anyone else it
// is ErrRequestNotFound, so request ids cannot be probed. It only reads
// (one GetItem): a poll is safe and costs what docs/capacity.md says.
//
// A request still RECEIVED OperationsConfig.RequeueAfter after it was
// requested has been stranded: its ingest died before the send, or the
// send and marking it failed both failed (the client got a 503, and its
// retry only returns this id as a duplicate). Operations.SweepStranded,
// which every worker runs, enqueues it again; reading it does not.
func (q *Query) GetRequest(ctx context.Context, c Caller, requestID string) (*Request, error) {
	if !ValidID(requestID) {
		return nil, fmt.Errorf("%w: requestId", ErrInvalidID)
	}
	r, err := q.cfg.Requests.GetRequest(ctx, requestID)
	if err != nil {
		return nil, err
	}
	if !c.Admin && r.UserID != c.UserID {
		return nil, ErrRequestNotFound
	}
	return r, nil
}

// Page is one page of requests; Cursor is empty on the last page.
type Page struct {
	Requests []*Request
	Cursor   string
}

// MaxLimit bounds page sizes.
const MaxLimit = 100

func checkLimit(limit int) error {
	if limit < 1 || limit > MaxLimit {
		return fmt.Errorf("%w: limit must be 1..%d", ErrInvalidEvent, MaxLimit)
	}
	return nil
}

// MyRequests lists a user's requests, newest first (GSI1). Requests appear
// once they are queued, by their queuedAt, or once their enqueue failed
// (FAILED_INGEST_ENQUEUE), by their requestedAt: a failed participation
// shows as failed rather than not at all (see Transition.ListedAt).
func (q *Query) MyRequests(ctx context.Context, userID string, limit int, cursor string) (Page, error) {
	if !ValidUserID(userID) {
		return Page{}, fmt.Errorf("%w: userId", ErrInvalidID)
	}
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	rs, next, err := q.cfg.Requests.UserRequests(ctx, userID, limit, cursor)
	return Page{Requests: rs, Cursor: next}, err
}
