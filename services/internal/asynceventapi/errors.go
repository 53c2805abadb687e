package asynceventapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/services/internal/server"
)

// ProblemBase prefixes the RFC 9457 problem type URIs.
const ProblemBase = "https://pacer.dev/problems/"

// problems maps each domain error to its HTTP status and problem type, in
// this one place. A fixed detail replaces the error's text where that text
// may carry a dependency's error (AWS error text, resource names, package
// prefixes); field, when set, is the location the problem names.
var problems = []struct {
	err    error
	status int
	code   string
	detail string
	field  string
}{
	{asyncevent.ErrInvalidID, http.StatusUnprocessableEntity, "invalid-id", "", ""},
	{asyncevent.ErrInvalidEvent, http.StatusUnprocessableEntity, "invalid-event", "", ""},
	{asyncevent.ErrSeed, http.StatusUnprocessableEntity, "seed-mismatch", "", "body.seed"},
	{asyncevent.ErrCursor, http.StatusBadRequest, "invalid-cursor", "the cursor is malformed, was altered, or was issued for another list", "query.cursor"},
	{asyncevent.ErrEventNotFound, http.StatusNotFound, "event-not-found", "", ""},
	{asyncevent.ErrRequestNotFound, http.StatusNotFound, "request-not-found", "", ""},
	{asyncevent.ErrEventExists, http.StatusConflict, "event-exists", "", ""},
	{asyncevent.ErrEventNotOpen, http.StatusConflict, "event-not-open", "", ""},
	{asyncevent.ErrEventClosed, http.StatusConflict, "event-closed", "", ""},
	{asyncevent.ErrLotteryClosed, http.StatusConflict, "lottery-closed", "", ""},
	{asyncevent.ErrNotLottery, http.StatusConflict, "not-a-lottery", "", ""},
	{asyncevent.ErrNotFirstCome, http.StatusConflict, "not-first-come", "", ""},
	{asyncevent.ErrNotRequeueable, http.StatusConflict, "not-requeueable", "", ""},
	{asyncevent.ErrDrawTooEarly, http.StatusConflict, "draw-too-early", "", ""},
	{asyncevent.ErrDrawPending, http.StatusConflict, "draw-pending-entries", "", ""},
	{asyncevent.ErrRedriveRunning, http.StatusConflict, "redrive-running", "a redrive is already running; retry once it has finished", ""},
	{asyncevent.ErrNoDLQ, http.StatusNotImplemented, "no-dlq", "no dead-letter queue is configured", ""},
	{asyncevent.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", "a dependency is unavailable; retry", ""},
}

const domainPrefix = "asyncevent: "

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
		if !errors.Is(err, p.err) {
			continue
		}
		if p.status >= 500 {
			log.Warn("asynceventapi: dependency error", "err", err)
		}
		m := &huma.ErrorModel{Type: ProblemBase + p.code, Title: http.StatusText(p.status), Status: p.status, Detail: p.detail}
		if m.Detail == "" {
			// Domain errors carry only domain text; drop the package prefix.
			m.Detail = strings.ReplaceAll(err.Error(), domainPrefix, "")
		}
		if p.field != "" {
			m.Errors = []*huma.ErrorDetail{{Message: m.Detail, Location: p.field}}
		}
		// An invalid event names its setting, as schema errors do.
		var ee *asyncevent.EventError
		if errors.As(err, &ee) && ee.Field != "" {
			m.Errors = []*huma.ErrorDetail{{Message: ee.Reason, Location: "body." + ee.Field}}
		}
		return m
	}
	if server.DependencyFailed(err) {
		log.Warn("asynceventapi: dependency error", "err", err)
		return &huma.ErrorModel{Type: ProblemBase + "unavailable", Title: http.StatusText(http.StatusServiceUnavailable), Status: http.StatusServiceUnavailable,
			Detail: "a dependency is unavailable; retry"}
	}
	log.Error("asynceventapi: internal error", "err", err)
	return &huma.ErrorModel{Type: ProblemBase + "internal", Title: http.StatusText(http.StatusInternalServerError), Status: http.StatusInternalServerError,
		Detail: "internal error"}
}
