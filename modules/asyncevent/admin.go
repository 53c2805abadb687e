package asyncevent

import (
	"context"
	"fmt"
	"time"
)

// Admin is the administrators' side of AsyncEvent: events (create, read,
// close), the lottery's draw, an event's requests and counts, a request's
// log, and the dead-letter queue (view and redrive). The API process builds
// it (its admin routes); a worker process does not. It is safe for
// concurrent use.
type Admin struct {
	cfg AdminConfig
}

// AdminConfig configures an Admin.
type AdminConfig struct {
	// Events creates, reads, closes and draws events.
	Events EventStore
	// Requests reads an event's requests, their counts and logs.
	Requests AdminReader
	// Draw moves a lottery's entries through its draw.
	Draw DrawStore
	// DeadLetters is the dead-letter queue. Nil: the DLQ methods answer
	// ErrNoDLQ.
	DeadLetters DeadLetters
	// Cache is the process's event cache (see EventCache): an event this
	// Admin closes or draws is dropped from it at once, so that the
	// process's Ingest, given the same cache, stops admitting at once. Nil:
	// a cache of this Admin's own, with DefaultEventCacheTTL.
	Cache *EventCache

	// DrawGrace is how long after the lottery cutoff a draw may start
	// (default 5 s), so that entries accepted just before the cutoff are
	// queued before the draw looks for pending ones.
	DrawGrace time.Duration
	// DrawConcurrency bounds the draw's parallel writes (default 16).
	DrawConcurrency int
	// DrawIndexWait is how long a draw waits for the event index (GSI2,
	// eventually consistent on DynamoDB) to show every counted entry
	// before it gives up with ErrUnavailable (default 10 s; the draw can be
	// called again).
	DrawIndexWait time.Duration
	// Lateness: EventStats reads an event again after its IndexLag when
	// the counts look broken. The same in every process (see Lateness).
	Lateness Lateness

	// Now is the clock (default time.Now).
	Now func() time.Time
}

// withDefaults returns c with every unset field at its default.
func (c AdminConfig) withDefaults() AdminConfig {
	if c.Cache == nil {
		c.Cache = NewEventCache(0)
	}
	if c.DrawGrace == 0 {
		c.DrawGrace = 5 * time.Second
	}
	if c.DrawConcurrency <= 0 {
		c.DrawConcurrency = 16
	}
	if c.DrawIndexWait == 0 {
		c.DrawIndexWait = 10 * time.Second
	}
	c.Lateness = c.Lateness.withDefaults()
	c.Now = defaultNow(c.Now)
	return c
}

// NewAdmin returns an Admin over cfg's ports.
func NewAdmin(cfg AdminConfig) *Admin {
	return &Admin{cfg: cfg.withDefaults()}
}

func (a *Admin) now() int64 { return a.cfg.Now().UnixMilli() }

// EventRequests lists an event's requests, newest first (GSI2), keeping
// only status when it is not "" (filtered on the server: the status is kept
// out of the index keys, so a request keeps its place in the list as its
// status changes).
func (a *Admin) EventRequests(ctx context.Context, eventID string, status Status, limit int, cursor string) (Page, error) {
	if !ValidID(eventID) {
		return Page{}, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	// An unknown event is ErrEventNotFound, as for its stats, not an empty
	// list (the config is usually cached: no extra call).
	if _, err := a.cfg.Cache.get(ctx, a.cfg.Events, eventID); err != nil {
		return Page{}, err
	}
	rs, next, err := a.cfg.Requests.EventRequests(ctx, EventRequestsQuery{EventID: eventID, Status: status, Limit: limit, Cursor: cursor})
	return Page{Requests: rs, Cursor: next}, err
}

// Logs returns a request's status log, oldest first.
func (a *Admin) Logs(ctx context.Context, requestID string) ([]*StatusLog, error) {
	if !ValidID(requestID) {
		return nil, fmt.Errorf("%w: requestId", ErrInvalidID)
	}
	logs, err := a.cfg.Requests.Logs(ctx, requestID)
	if err == nil && len(logs) == 0 {
		return nil, ErrRequestNotFound
	}
	return logs, err
}

// EventStats counts an event's requests by status and result code, and
// its dead-letter candidates (Request.DLQCandidate), in one pass over its
// requests (the event index and the pending index, never a scan) and,
// for FIRST_COME, checks capacityTotal − capacityRemaining == #SUCCEEDED.
//
// The requests and the capacity item are separate reads: a decision that
// takes a seat between them, or one the event index (GSI2) does not show
// yet, makes a sound event look broken. So when the invariant does not
// hold, both are read again after the index lag (at least 100 ms), up to
// statsAttempts reads in all. A broken invariant stays broken; a transient
// one does not raise a false alarm.
func (a *Admin) EventStats(ctx context.Context, eventID string) (*Stats, error) {
	cfg, err := a.GetEvent(ctx, eventID)
	if err != nil {
		return nil, err
	}
	return eventStats(ctx, a.cfg.Requests, a.cfg.Requests.PendingRequests, cfg, a.cfg.Lateness)
}
