package asyncevent

import (
	"context"
	"errors"
	"fmt"
)

// Participation is the answer to a participation request.
type Participation struct {
	RequestID   string
	IsDuplicate bool
}

// Participate accepts userID's participation in eventID. userID must come
// from a verified identity, never from the request body.
//
// A new participation costs 3 AWS calls once the event's config is cached:
// the lock + request transaction, the SendMessage, and the RECEIVED →
// QUEUED transaction. A duplicate costs 1 and returns the stored
// requestId. Unknown or closed events are rejected before anything is
// written. If the enqueue fails the request becomes FAILED_FINAL /
// FAILED_INGEST_ENQUEUE (the lock is kept) and its id is still returned.
// Config.Observer, if set, hears the answer.
func (s *Service) Participate(ctx context.Context, eventID, userID string) (Participation, error) {
	p, err := s.participate(ctx, eventID, userID)
	if s.cfg.Observer != nil {
		s.cfg.Observer.Participated(p, err)
	}
	return p, err
}

func (s *Service) participate(ctx context.Context, eventID, userID string) (Participation, error) {
	if !ValidID(eventID) {
		return Participation{}, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	if !ValidUserID(userID) {
		return Participation{}, fmt.Errorf("%w: userId", ErrInvalidID)
	}
	cfg, err := s.event(ctx, eventID)
	if err != nil {
		return Participation{}, err
	}
	now := s.now()
	if err := admits(cfg, now); err != nil {
		return Participation{}, err
	}
	s.noteOpen(cfg)
	r := &Request{
		RequestID:   newID(now),
		EventID:     eventID,
		UserID:      userID,
		EventType:   cfg.EventType,
		Status:      StatusReceived,
		UIResult:    ResultPending,
		RequestedAt: now,
		TTL:         (now + RequestTTL.Milliseconds()) / 1000,
	}
	if cfg.EventType == Lottery {
		r.LotteryCutoffAt, r.AnnouncedAt = cfg.LotteryCutoffAt, cfg.AnnouncedAt
	}
	// The lock expires a week after the event ends, and every event ends
	// (EndsAt): it takes no participation after that end, so no lock
	// expires while its event could admit the same user again.
	lockTTL := (max(cfg.EndsAt(), now) + LockTTLAfter.Milliseconds()) / 1000
	existing, dup, err := s.store.CreateRequest(ctx, r, lockTTL)
	if err != nil {
		return Participation{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if dup {
		return Participation{RequestID: existing, IsDuplicate: true}, nil
	}
	if err := s.enqueue(ctx, r, now+1, cfg.IndexShards); err != nil { // after the RECEIVED log
		return Participation{}, err
	}
	return Participation{RequestID: r.RequestID}, nil
}

// enqueue sends r's message and moves r RECEIVED → QUEUED with queuedAt, or,
// if the send fails, RECEIVED → FAILED_FINAL / FAILED_INGEST_ENQUEUE. Its
// transitions are timed no earlier than floor (epoch millis). It fails
// (ErrUnavailable) only if the send failed and the request could not be
// marked failed either: then it stays RECEIVED, for the sweep. shards is
// the event's IndexShards.
func (s *Service) enqueue(ctx context.Context, r *Request, floor int64, shards int) error {
	msg := Message{RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID, EventType: r.EventType}
	if err := s.queue.Send(ctx, msg.Encode()); err != nil {
		at := max(s.now(), floor)
		ferr := s.store.Transition(context.WithoutCancel(ctx), &Transition{
			RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID,
			From: []Status{StatusReceived}, To: StatusFailedFinal, At: at,
			FinishedAt: at, UIResult: ResultFailed, ResultCode: CodeFailedIngestEnqueue,
			FailureClass: Requeueable, ErrorCode: string(CodeFailedIngestEnqueue),
			ErrorMessage: truncate("enqueue failed: "+err.Error(), MaxErrorMessage),
			Message:      "enqueue failed",
		})
		if ferr != nil {
			var se *StateError
			if !errors.As(ferr, &se) {
				// The request stays RECEIVED with no message. The client's
				// retry gets this id as a duplicate, and the sweep enqueues
				// it after Config.RequeueAfter (see SweepStranded).
				s.cfg.Log.Error("asyncevent: enqueue failed and the request could not be marked failed", "requestId", r.RequestID, "send", err, "mark", ferr)
				return fmt.Errorf("%w: enqueue failed: %v", ErrUnavailable, err)
			}
		}
		s.cfg.Log.Warn("asyncevent: enqueue failed", "requestId", r.RequestID, "err", err)
		return nil
	}
	// queuedAt is stamped now and must land within WriteTimeout: the
	// arrival allocator relies on it (Config.MaxLateness).
	at := max(s.now(), floor)
	wctx, cancel := context.WithTimeout(ctx, s.cfg.WriteTimeout)
	err := s.store.Transition(wctx, &Transition{
		RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID,
		From: []Status{StatusReceived}, To: StatusQueued, At: at, QueuedAt: at, IndexShards: shards,
	})
	cancel()
	var se *StateError
	switch {
	case err == nil:
	case errors.As(err, &se):
		// A worker got the message first and took the request from
		// RECEIVED, recording queuedAt itself: nothing left to do.
	default:
		// The message is on the queue: a worker will process the request
		// and record queuedAt from the message. The request is accepted.
		// The write may still land, late (QueuedAtUnsure).
		s.unsure.Add(1)
		s.cfg.Log.Warn("asyncevent: could not mark request queued; the worker will", "requestId", r.RequestID, "err", err)
	}
	return nil
}

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
