package asynceventapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/services/internal/server"
)

// problemTypes maps each domain error to its HTTP status and problem type
// (server.ProblemBase + Name), in this one place. A fixed detail replaces
// the error's text where that text may carry a dependency's error (AWS
// error text, resource names); field, when set, is the location the
// problem names.
var problemTypes = []server.ProblemType{
	{Err: asyncevent.ErrInvalidID, Status: http.StatusUnprocessableEntity, Name: "invalid-id"},
	{Err: asyncevent.ErrInvalidEvent, Status: http.StatusUnprocessableEntity, Name: "invalid-event"},
	{Err: asyncevent.ErrSeed, Status: http.StatusUnprocessableEntity, Name: "seed-mismatch", Field: "body.seed"},
	{Err: asyncevent.ErrCursor, Status: http.StatusBadRequest, Name: "invalid-cursor", Detail: "the cursor is malformed, was altered, or was issued for another list", Field: "query.cursor"},
	{Err: asyncevent.ErrEventNotFound, Status: http.StatusNotFound, Name: "event-not-found"},
	{Err: asyncevent.ErrRequestNotFound, Status: http.StatusNotFound, Name: "request-not-found"},
	{Err: asyncevent.ErrEventExists, Status: http.StatusConflict, Name: "event-exists"},
	{Err: asyncevent.ErrEventNotOpen, Status: http.StatusConflict, Name: "event-not-open"},
	{Err: asyncevent.ErrEventClosed, Status: http.StatusConflict, Name: "event-closed"},
	{Err: asyncevent.ErrLotteryClosed, Status: http.StatusConflict, Name: "lottery-closed"},
	{Err: asyncevent.ErrNotLottery, Status: http.StatusConflict, Name: "not-a-lottery"},
	{Err: asyncevent.ErrNotFirstCome, Status: http.StatusConflict, Name: "not-first-come"},
	{Err: asyncevent.ErrNotRequeueable, Status: http.StatusConflict, Name: "not-requeueable"},
	{Err: asyncevent.ErrDrawTooEarly, Status: http.StatusConflict, Name: "draw-too-early"},
	{Err: asyncevent.ErrDrawPending, Status: http.StatusConflict, Name: "draw-pending-entries"},
	{Err: asyncevent.ErrDeadClass, Status: http.StatusUnprocessableEntity, Name: "invalid-dead-class", Field: "query.class"},
	{Err: asyncevent.ErrRedriveRunning, Status: http.StatusConflict, Name: "redrive-running", Detail: "a redrive is already running; retry once it has finished"},
	{Err: asyncevent.ErrNoDLQ, Status: http.StatusNotImplemented, Name: "no-dlq", Detail: "no dead-letter queue is configured"},
	{Err: asyncevent.ErrHumanTokenMissing, Status: http.StatusUnprocessableEntity, Name: "human-token-missing", Field: "body.humanToken"},
	{Err: asyncevent.ErrHumanCheckFailed, Status: http.StatusUnprocessableEntity, Name: "human-check-failed", Field: "body.humanToken"},
	{Err: asyncevent.ErrHumanCheckUnavailable, Status: http.StatusServiceUnavailable, Name: "human-check-unavailable", Headers: server.RetryLater},
	{Err: asyncevent.ErrRateLimited, Status: http.StatusTooManyRequests, Name: server.RateLimitedProblem, Headers: retryAfter},
	{Err: asyncevent.ErrUnavailable, Status: http.StatusServiceUnavailable, Name: "unavailable", Detail: "a dependency is unavailable; retry after Retry-After", Headers: server.RetryLater},
}

// retryAfter is a RateLimitedError's Retry-After, in whole seconds
// rounded up.
func retryAfter(err error) http.Header {
	var rl *asyncevent.RateLimitedError
	if !errors.As(err, &rl) {
		return nil
	}
	return http.Header{"Retry-After": {server.RetryAfterSeconds(rl.RetryAfter)}}
}

// problems maps the domain's errors to problems, logging to log.
func problems(log *slog.Logger) server.Errors {
	return server.Errors{Types: problemTypes, Prefix: "asyncevent: ", Fields: eventFields, Log: log}
}

// eventFields names the setting an invalid event is about, as schema
// errors do.
func eventFields(err error) []*huma.ErrorDetail {
	var ee *asyncevent.EventError
	if errors.As(err, &ee) && ee.Field != "" {
		return []*huma.ErrorDetail{{Message: ee.Reason, Location: "body." + ee.Field}}
	}
	return nil
}
