package photoapi

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

// locations maps the domain's field names that are not body fields to where
// they are in the request.
var locations = map[string]string{
	"eventId": "path.eventId", "bib": "path.bib", "limit": "query.limit",
	"cursor": "query.cursor", "mode": "body.mode", "after": "query.after",
}

// location turns a domain field ("photos[2].bibs[0]") into a Huma error
// location ("body.photos[2].bibs[0]").
func location(field string) string {
	if l, ok := locations[field]; ok {
		return l
	}
	return "body." + field
}

// problem maps a domain error to its HTTP problem (RFC 9457). It is the one
// place where domain errors meet status codes:
//
//	*photo.ValidationError (photo.ErrInvalid)  422, one detail per field
//	photo.ErrNotFound                          404 (another org's ids too)
//	photo.ErrCursor                            400
//	photo.ErrConflict                          409
//	photo.ErrForbidden                         403
//	a failed dependency (server.DependencyFailed) 503, logged, no details
//	anything else                              500, logged, no details
func problem(log *slog.Logger, err error) error {
	var se huma.StatusError
	var ve *photo.ValidationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return err
	case errors.As(err, &ve):
		details := make([]error, len(ve.Problems))
		for i, p := range ve.Problems {
			details[i] = &huma.ErrorDetail{Location: location(p.Field), Message: p.Message, Value: p.Value}
		}
		return huma.Error422UnprocessableEntity("validation failed", details...)
	case errors.Is(err, photo.ErrNotFound):
		return huma.Error404NotFound(public(err))
	case errors.Is(err, photo.ErrCursor):
		return huma.Error400BadRequest("invalid cursor: it is malformed, tampered with, or belongs to another query or organizer",
			&huma.ErrorDetail{Location: "query.cursor", Message: "invalid cursor"})
	case errors.Is(err, photo.ErrConflict):
		return huma.Error409Conflict(public(err))
	case errors.Is(err, photo.ErrForbidden):
		return huma.Error403Forbidden(public(err))
	case errors.Is(err, context.Canceled):
		return huma.NewError(499, "request cancelled")
	}
	if server.DependencyFailed(err) {
		log.Warn("photo-api: dependency error", "err", err)
		return huma.Error503ServiceUnavailable("a dependency is unavailable; retry")
	}
	log.Error("photo-api: internal error", "err", err)
	return huma.Error500InternalServerError("internal error")
}

// public strips the package prefix from a domain error's message.
func public(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "photo: ")
	return s
}
