package photo

import (
	"errors"
	"fmt"
	"strings"
)

// Domain errors. Stores translate their vendors' errors into these, and the
// HTTP layer maps them to status codes in one place.
var (
	// ErrNotFound: the organizer, event, photographer, runner or photo does
	// not exist, or belongs to another organizer (the two are not told
	// apart, so nothing leaks).
	ErrNotFound = errors.New("photo: not found")
	// ErrInvalid: the input breaks a rule. Returned as *ValidationError.
	ErrInvalid = errors.New("photo: invalid input")
	// ErrConflict: the request clashes with existing state (an id already
	// taken, a concurrent change that outlasted the retries).
	ErrConflict = errors.New("photo: conflict")
	// ErrCursor: a pagination cursor is malformed, tampered with, or was
	// issued for another query or organizer.
	ErrCursor = errors.New("photo: invalid cursor")
	// ErrForbidden: the caller may not act on this organizer.
	ErrForbidden = errors.New("photo: forbidden")
)

// Problem is one invalid field.
type Problem struct {
	// Field locates the value, e.g. "photos[3].bibs[1]" or "eventId".
	Field   string
	Message string
	// Value is the offending value, when it is safe to echo.
	Value any
}

// ValidationError lists every invalid field of a request. errors.Is(err,
// ErrInvalid) holds for it.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("photo: invalid input: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Field, p.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// problems collects validation problems.
type problems struct{ list []Problem }

func (ps *problems) add(field, msg string, value any) {
	ps.list = append(ps.list, Problem{Field: field, Message: msg, Value: value})
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps.list}
}

// Invalid returns a *ValidationError for one field.
func Invalid(field, msg string, value any) error {
	return &ValidationError{Problems: []Problem{{Field: field, Message: msg, Value: value}}}
}

// notFound returns ErrNotFound naming what was missing.
func notFound(what, id string) error { return fmt.Errorf("%w: %s %q", ErrNotFound, what, id) }

// NotFound returns ErrNotFound naming what was missing, for stores.
func NotFound(what, id string) error { return notFound(what, id) }
