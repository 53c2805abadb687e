package asyncevent

import (
	"errors"
	"fmt"
)

// Domain errors. Services map them to HTTP statuses in one place.
var (
	ErrInvalidID         = errors.New("asyncevent: invalid id")
	ErrInvalidEvent      = errors.New("asyncevent: invalid event settings")
	ErrEventNotFound     = errors.New("asyncevent: event not found")
	ErrEventExists       = errors.New("asyncevent: event already exists")
	ErrEventNotOpen      = errors.New("asyncevent: event is not open yet")
	ErrEventClosed       = errors.New("asyncevent: event is closed")
	ErrLotteryClosed     = errors.New("asyncevent: lottery entries closed at the cutoff")
	ErrRequestNotFound   = errors.New("asyncevent: request not found")
	ErrCursor            = errors.New("asyncevent: invalid cursor")
	ErrNotLottery        = errors.New("asyncevent: event is not a lottery")
	ErrNotFirstCome      = errors.New("asyncevent: event is not FIRST_COME")
	ErrNotRequeueable    = errors.New("asyncevent: only a request whose enqueue failed (FAILED_INGEST_ENQUEUE) can be re-queued")
	ErrDrawTooEarly      = errors.New("asyncevent: the lottery cutoff has not passed")
	ErrDrawPending       = errors.New("asyncevent: entries are still waiting to be processed")
	ErrSeed              = errors.New("asyncevent: draw seed does not match the commitment")
	ErrCapacityExhausted = errors.New("asyncevent: capacity exhausted")
	ErrCapacityLeft      = errors.New("asyncevent: capacity is not exhausted")
	ErrUnavailable       = errors.New("asyncevent: a dependency is unavailable; retry")
	ErrRedriveRunning    = errors.New("asyncevent: a redrive is already running")
	ErrBadMessage        = errors.New("asyncevent: malformed queue message")
	ErrDeadClass         = errors.New("asyncevent: unknown dead-letter class")
	// ErrHumanTokenMissing: the event requires a human check and the
	// participation carried no token (humanToken).
	ErrHumanTokenMissing = errors.New("asyncevent: the event requires a human check token")
	// ErrHumanCheckFailed: the challenge provider did not pass the token.
	ErrHumanCheckFailed = errors.New("asyncevent: the human check failed")
	// ErrHumanCheckUnavailable: the token could not be verified (the
	// provider could not be reached, or the deployment has no verifier)
	// and the event's policy refuses.
	ErrHumanCheckUnavailable = errors.New("asyncevent: the human check is unavailable")
	// ErrLeased: another worker holds the lease of a lock job.
	ErrLeased = errors.New("asyncevent: leased by another worker")
	// ErrLockJobNotFound: the lock job is gone or finished.
	ErrLockJobNotFound = errors.New("asyncevent: lock job not found")
	// ErrAllocationHeld: another allocator holds the event's allocation
	// lease.
	ErrAllocationHeld = errors.New("asyncevent: another allocator holds the event")
	// ErrAllocationFenced: the allocator's lease was taken over (its fence
	// is stale); it wrote nothing.
	ErrAllocationFenced = errors.New("asyncevent: allocation lease lost")
	// ErrLineMeasured: another keeper stored the event's line since this
	// one read it; this one's measurement was not stored.
	ErrLineMeasured = errors.New("asyncevent: the line was measured meanwhile")
)

// EventError is ErrInvalidEvent naming the setting at fault (a NewEvent
// field as the API spells it: "capacityTotal", "lotteryCutoffAt").
type EventError struct {
	Field  string
	Reason string
}

func (e *EventError) Error() string { return ErrInvalidEvent.Error() + ": " + e.Reason }

// Unwrap makes errors.Is(err, ErrInvalidEvent) true.
func (e *EventError) Unwrap() error { return ErrInvalidEvent }

// StateError is a conditional write to a request that failed because the
// request was not in an expected state. Current is the request as it is
// now (from the failed write's ALL_OLD item), or nil if it does not exist.
type StateError struct {
	RequestID string
	Want      []Status
	Current   *Request
}

func (e *StateError) Error() string {
	if e.Current == nil {
		return fmt.Sprintf("asyncevent: request %s does not exist", e.RequestID)
	}
	return fmt.Sprintf("asyncevent: request %s is %s, want one of %v", e.RequestID, e.Current.Status, e.Want)
}

// Is makes errors.Is(err, ErrRequestNotFound) true for a missing request.
func (e *StateError) Is(target error) bool { return target == ErrRequestNotFound && e.Current == nil }

// EventStateError is a conditional write to an EventConfig that failed
// because the event was not in an expected state.
type EventStateError struct {
	EventID string
	Current *EventConfig // nil if the event does not exist
}

func (e *EventStateError) Error() string {
	if e.Current == nil {
		return fmt.Sprintf("asyncevent: event %s does not exist", e.EventID)
	}
	return fmt.Sprintf("asyncevent: event %s is %s", e.EventID, e.Current.Status)
}

// Is makes errors.Is(err, ErrEventNotFound) true for a missing event and
// errors.Is(err, ErrEventClosed) true for one in another state.
func (e *EventStateError) Is(target error) bool {
	return (target == ErrEventNotFound && e.Current == nil) || (target == ErrEventClosed && e.Current != nil)
}

// PendingError is ErrDrawPending with how many entries are still waiting.
type PendingError struct {
	Pending  int // entries not yet processed
	Received int // of those, still RECEIVED (not queued)
}

func (e *PendingError) Error() string {
	msg := fmt.Sprintf("asyncevent: %d entries are still waiting to be processed; retry the draw once the queue has drained", e.Pending)
	if e.Received > 0 {
		msg += fmt.Sprintf(" (%d were never queued: sweep the stranded requests first)", e.Received)
	}
	return msg
}

// Is makes errors.Is(err, ErrDrawPending) true.
func (e *PendingError) Is(target error) bool { return target == ErrDrawPending }
