package asyncevent

import (
	"context"
	"errors"
	"fmt"
)

// A repeated participation (a second click, a client retrying after its
// 202 was lost) gets the requestId of the first, even when the
// participation itself would now be refused: Ingest reads the lock of a
// participation refused for a reason a repeat can meet (see repeatable)
// before answering the refusal. A new participation costs no extra call.

// repeatable reports whether a participation refused with err may be a
// repeat of an accepted one: the event closed, or the human check refused
// (a repeat's token was consumed by its first try). An event not open yet
// or unknown has no accepted participation, and a rate limit answers
// before anything is read.
func repeatable(err error) bool {
	for _, e := range []error{ErrEventClosed, ErrLotteryClosed, ErrHumanTokenMissing, ErrHumanCheckFailed, ErrHumanCheckUnavailable} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// repeated answers a participation refused with refused (see repeatable):
// the stored requestId as a duplicate if the user's lock on the event
// exists, else refused. If the lock cannot be read the answer is
// ErrUnavailable: a repeat must not be told it was refused.
func (in *Ingest) repeated(ctx context.Context, eventID, userID string, refused error) (Participation, error) {
	id, ok, err := in.cfg.Requests.LockedRequest(ctx, eventID, userID)
	switch {
	case err != nil:
		return Participation{}, fmt.Errorf("%w: %v (reading the lock of a refused participation: %v)", ErrUnavailable, err, refused)
	case ok:
		return Participation{RequestID: id, IsDuplicate: true}, nil
	}
	return Participation{}, refused
}
