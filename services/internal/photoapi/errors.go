package photoapi

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

// problemTypes maps each domain error to its HTTP status and problem type
// (server.ProblemBase + Name), in this one place. A photo.ErrNotFound
// answers for another organizer's ids too.
var problemTypes = []server.ProblemType{
	{Err: photo.ErrInvalid, Status: http.StatusUnprocessableEntity, Name: "invalid-input", Detail: "validation failed"},
	{Err: photo.ErrNotFound, Status: http.StatusNotFound, Name: "not-found"},
	{Err: photo.ErrCursor, Status: http.StatusBadRequest, Name: "invalid-cursor",
		Detail: "invalid cursor: it is malformed, tampered with, or belongs to another query or organizer"},
	{Err: photo.ErrConflict, Status: http.StatusConflict, Name: "conflict"},
	{Err: photo.ErrForbidden, Status: http.StatusForbidden, Name: "forbidden"},
}

// problems maps the domain's errors to problems, logging to log.
func problems(log *slog.Logger) server.Errors {
	return server.Errors{Types: problemTypes, Prefix: "photo: ", Fields: fields, Log: log}
}

// fields names the fields an error is about: each of a
// *photo.ValidationError's, or the cursor.
func fields(err error) []*huma.ErrorDetail {
	var ve *photo.ValidationError
	if errors.Is(err, photo.ErrCursor) {
		return []*huma.ErrorDetail{{Location: "query.cursor", Message: "invalid cursor"}}
	}
	if !errors.As(err, &ve) {
		return nil
	}
	details := make([]*huma.ErrorDetail, len(ve.Problems))
	for i, p := range ve.Problems {
		details[i] = &huma.ErrorDetail{Location: location(p.Field), Message: p.Message, Value: p.Value}
	}
	return details
}

// locations maps the domain's field names that are not body fields to where
// they are in the request.
var locations = map[string]string{
	"eventId": "path.eventId", "bib": "path.bib", "limit": "query.limit",
	"cursor": "query.cursor", "mode": "body.mode", "after": "query.after",
	"window": "query.window",
}

// location turns a domain field ("photos[2].bibs[0]") into a Huma error
// location ("body.photos[2].bibs[0]").
func location(field string) string {
	if l, ok := locations[field]; ok {
		return l
	}
	if strings.HasPrefix(field, "query.") || strings.HasPrefix(field, "path.") {
		return field // placed by inQuery
	}
	return "body." + field
}

// inQuery places the named fields of a validation error in the query
// string: for operations whose query parameters share a name with body
// fields elsewhere (the name search's name, limit and offset).
func inQuery(err error, fields ...string) error {
	var ve *photo.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	for i, p := range ve.Problems {
		if slices.Contains(fields, p.Field) {
			ve.Problems[i].Field = "query." + p.Field
		}
	}
	return err
}
