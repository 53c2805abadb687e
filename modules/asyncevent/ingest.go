package asyncevent

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Ingest accepts participations: the API's write path (POST
// /events/{eventId}/participations). It admits a participation against the
// event's config, writes the request and its idempotency lock, and sends
// its message to the queue, where a Worker decides it. The API process
// builds it; it is safe for concurrent use.
type Ingest struct {
	cfg IngestConfig
	enq *enqueuer
}

// IngestConfig configures an Ingest.
type IngestConfig struct {
	// Requests writes the request and its lock, and records it queued.
	Requests IngestStore
	// Events reads the event a participation is for (through Cache).
	Events EventReader
	// Queue takes the participation's message.
	Queue Queue
	// Cache is the process's event cache, shared with its Admin (whose
	// event changes then stop admissions here at once) and its Operations
	// (whose capacity check looks first at the events admitted here). Nil:
	// a cache of this Ingest's own, with DefaultEventCacheTTL.
	Cache *EventCache

	// Lateness bounds the queuedAt write (its WriteTimeout); the same in
	// every process (see Lateness).
	Lateness Lateness

	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
	// Observer, if set, hears every Participate answer (for metrics).
	Observer Observer

	// Humans verifies the tokens of events that require a human check
	// (EventConfig.HumanCheck). Nil: participations in such events are
	// refused with ErrHumanCheckUnavailable (the deployment has no
	// verifier).
	Humans HumanVerifier
	// HumanChecks, if set, hears how each human check ends (for metrics).
	HumanChecks HumanCheckObserver
	// Limiter applies the events' own budgets (EventConfig.AddressLimit).
	// Nil: events' budgets are not applied (the deployment's still are, by
	// the API).
	Limiter EventLimiter
}

// withDefaults returns c with every unset field at its default.
func (c IngestConfig) withDefaults() IngestConfig {
	if c.Cache == nil {
		c.Cache = NewEventCache(0)
	}
	c.Lateness = c.Lateness.withDefaults()
	c.Now, c.Log = defaultNow(c.Now), defaultLog(c.Log)
	return c
}

// NewIngest returns an Ingest over cfg's ports.
func NewIngest(cfg IngestConfig) *Ingest {
	cfg = cfg.withDefaults()
	return &Ingest{cfg: cfg, enq: newEnqueuer(cfg.Queue, cfg.Requests, cfg.Lateness, cfg.Now, cfg.Log)}
}

// Participation is the answer to a participation request.
type Participation struct {
	RequestID   string
	IsDuplicate bool
	// HumanCheck is HumanAdmittedUnverified when the event requires a
	// human check that could not be made and its policy admitted the
	// participation anyway; else "".
	HumanCheck string
}

// ParticipateInput is one participation (Ingest.Participate).
type ParticipateInput struct {
	// EventID is the event participated in.
	EventID string
	// UserID is the participant: it must come from a verified identity,
	// never from the request body.
	UserID string
	// HumanToken is the challenge provider's token, for an event that
	// requires a human check (ignored otherwise).
	HumanToken string
	// ClientAddr is the client's IP address, which the provider may check
	// the token against ("" when unknown).
	ClientAddr string
}

// Participate accepts p.UserID's participation in p.EventID.
//
// A new participation costs 3 AWS calls once the event's config is cached:
// the lock + request transaction, the SendMessage, and the RECEIVED →
// QUEUED transaction. A duplicate costs 1 and returns the stored
// requestId. Unknown events and events not open yet are rejected before
// anything is read or written; so is a participation past the event's own
// budget (ErrRateLimited, as a *RateLimitedError; checked before anything
// else is asked, so a retry after it gets the same answer as a first try).
// A participation that the event's state refuses (closed:
// ErrEventClosed, ErrLotteryClosed) or its human check refuses
// (ErrHumanTokenMissing, ErrHumanCheckFailed, ErrHumanCheckUnavailable:
// the check runs before the first write, and costs a call to the
// provider) may be a repeat of one accepted earlier, whose 202 the client
// lost: its idempotency lock is read (1 strongly consistent GetItem), and
// if it exists the answer is the stored requestId as a duplicate, as for
// any repeat; otherwise the refusal stands. (A human check token is
// single-use, so a client retrying with the token of its first try fails
// the check: the lock answers it.) Nothing is written on those paths. If
// the enqueue fails the request becomes FAILED_FINAL /
// FAILED_INGEST_ENQUEUE (the lock is kept) and its id is still returned.
// IngestConfig.Observer, if set, hears the answer.
func (in *Ingest) Participate(ctx context.Context, p ParticipateInput) (Participation, error) {
	a, err := in.participate(ctx, p)
	if in.cfg.Observer != nil {
		in.cfg.Observer.Participated(a, err)
	}
	return a, err
}

func (in *Ingest) participate(ctx context.Context, p ParticipateInput) (Participation, error) {
	eventID, userID := p.EventID, p.UserID
	if !ValidID(eventID) {
		return Participation{}, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	if !ValidUserID(userID) {
		return Participation{}, fmt.Errorf("%w: userId", ErrInvalidID)
	}
	cfg, err := in.cfg.Cache.get(ctx, in.cfg.Events, eventID)
	if err != nil {
		return Participation{}, err
	}
	now := in.cfg.Now().UnixMilli()
	refused := admits(cfg, now)
	if refused != nil && !repeatable(refused) {
		return Participation{}, refused
	}
	// The event's own budget comes first: before the provider is asked,
	// and before a refused participation's lock is read.
	if err := in.checkLimits(cfg, p.ClientAddr); err != nil {
		return Participation{}, err
	}
	if refused != nil {
		return in.repeated(ctx, eventID, userID, refused)
	}
	human, err := in.checkHuman(ctx, cfg, p)
	if err != nil {
		return in.repeated(ctx, eventID, userID, err)
	}
	in.cfg.Cache.noteOpen(cfg)
	r := &Request{
		RequestID:   newID(now),
		EventID:     eventID,
		UserID:      userID,
		EventType:   cfg.EventType,
		Status:      StatusReceived,
		UIResult:    ResultPending,
		RequestedAt: now,
		TTL:         cfg.requestTTL(now),
	}
	if cfg.EventType == Lottery {
		r.LotteryCutoffAt, r.AnnouncedAt = cfg.LotteryCutoffAt, cfg.AnnouncedAt
	}
	// The lock expires a week after the event ends, and every event ends
	// (EndsAt): it takes no participation after that end, so no lock
	// expires while its event could admit the same user again.
	lockTTL := (max(cfg.EndsAt(), now) + LockTTLAfter.Milliseconds()) / 1000
	existing, dup, err := in.cfg.Requests.CreateRequest(ctx, r, lockTTL)
	if err != nil {
		return Participation{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if dup {
		return Participation{RequestID: existing, IsDuplicate: true, HumanCheck: human}, nil
	}
	if err := in.enq.enqueue(ctx, r, now+1, cfg.IndexShards); err != nil { // after the RECEIVED log
		return Participation{}, err
	}
	return Participation{RequestID: r.RequestID, HumanCheck: human}, nil
}

// QueuedAtUnsure is how many of this Ingest's queuedAt writes (RECEIVED
// → QUEUED) failed other than by their condition: at WriteTimeout, or on
// a broken connection. Such a write may still land, and land later than
// Lateness.Max allows, so each may become one late arrival (see
// Worker.QueuedAtUnsure, which counts the workers' such writes; every
// late arrival comes from one). A process starved of CPU for longer than
// WriteTimeout is the usual cause.
func (in *Ingest) QueuedAtUnsure() int64 { return in.enq.unsure.Load() }

// admits checks that an event accepts participations at now.
func admits(cfg *EventConfig, now int64) error {
	switch {
	case cfg.Status != EventOpen:
		if cfg.EventType == Lottery {
			return fmt.Errorf("%w: event %s is %s", ErrLotteryClosed, cfg.EventID, cfg.Status)
		}
		return fmt.Errorf("%w: event %s is %s", ErrEventClosed, cfg.EventID, cfg.Status)
	case cfg.OpensAt > 0 && now < cfg.OpensAt:
		return fmt.Errorf("%w: event %s opens at %d", ErrEventNotOpen, cfg.EventID, cfg.OpensAt)
	case cfg.EventType == Lottery && now >= cfg.LotteryCutoffAt:
		return fmt.Errorf("%w: event %s closed entries at %d", ErrLotteryClosed, cfg.EventID, cfg.LotteryCutoffAt)
	case cfg.EventType == FirstCome && now >= cfg.EndsAt():
		return fmt.Errorf("%w: event %s closed at %d", ErrEventClosed, cfg.EventID, cfg.EndsAt())
	}
	return nil
}
