package asynceventapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// ProblemBase prefixes the RFC 9457 problem type URIs.
const ProblemBase = "https://pacer.dev/problems/"

// problems maps each domain error to its HTTP status and problem type, in
// this one place.
var problems = []struct {
	err    error
	status int
	code   string
}{
	{asyncevent.ErrInvalidID, http.StatusUnprocessableEntity, "invalid-id"},
	{asyncevent.ErrInvalidEvent, http.StatusUnprocessableEntity, "invalid-event"},
	{asyncevent.ErrSeed, http.StatusUnprocessableEntity, "seed-mismatch"},
	{asyncevent.ErrCursor, http.StatusBadRequest, "invalid-cursor"},
	{asyncevent.ErrEventNotFound, http.StatusNotFound, "event-not-found"},
	{asyncevent.ErrRequestNotFound, http.StatusNotFound, "request-not-found"},
	{asyncevent.ErrEventExists, http.StatusConflict, "event-exists"},
	{asyncevent.ErrEventNotOpen, http.StatusConflict, "event-not-open"},
	{asyncevent.ErrEventClosed, http.StatusConflict, "event-closed"},
	{asyncevent.ErrLotteryClosed, http.StatusConflict, "lottery-closed"},
	{asyncevent.ErrNotLottery, http.StatusConflict, "not-a-lottery"},
	{asyncevent.ErrDrawTooEarly, http.StatusConflict, "draw-too-early"},
	{asyncevent.ErrDrawPending, http.StatusConflict, "draw-pending-entries"},
	{asyncevent.ErrNoDLQ, http.StatusNotImplemented, "no-dlq"},
	{asyncevent.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
}

// problem turns a domain error into an RFC 9457 problem. Errors that are
// already HTTP errors (from huma or the auth middleware) pass through;
// unknown errors are logged and become a 500 that reveals nothing.
func problem(log *slog.Logger, err error) error {
	if err == nil {
		return nil
	}
	var se huma.StatusError
	if errors.As(err, &se) {
		return err
	}
	for _, p := range problems {
		if errors.Is(err, p.err) {
			return &huma.ErrorModel{Type: ProblemBase + p.code, Title: http.StatusText(p.status), Status: p.status, Detail: err.Error()}
		}
	}
	log.Error("asynceventapi: internal error", "err", err)
	return &huma.ErrorModel{Type: ProblemBase + "internal", Title: http.StatusText(http.StatusInternalServerError), Status: http.StatusInternalServerError,
		Detail: "internal error"}
}
