package server

import (
	"slices"

	"github.com/danielgtaylor/huma/v2"
)

// Tags both APIs use. Every tag is in Title case (a service's own too:
// "Participation", "Organizer: search").
const (
	TagAdmin  = "Admin"
	TagHealth = "Health"
)

// OpOption sets one more property of an operation Op makes.
type OpOption func(*huma.Operation)

// Op is the operation id (method and path), summed up by summary and
// grouped in the spec under tag, that every route of a service is
// registered with. It needs a bearer token (Bearer) unless NoToken says
// otherwise; opts set the rest:
//
//	Describe(text)   its description
//	Status(code)     the status of its success, when not Huma's default (200, or 204 without a body)
//	MaxBody(n)       the largest request body it reads, when not Huma's default
//	Fails(codes...)  the statuses its domain errors map to (its service's errors.go)
//	NoToken()        it is public: no token needed
//
// The statuses the server itself may answer (401, 422, ...) are documented
// by NewAPI (documentServerErrors), not here.
func Op(id, method, path, summary, tag string, opts ...OpOption) huma.Operation {
	o := huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary, Tags: []string{tag}, Security: Bearer}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// Describe sets the operation's description.
func Describe(text string) OpOption {
	return func(o *huma.Operation) { o.Description = text }
}

// Status sets the status the operation answers with on success.
func Status(code int) OpOption {
	return func(o *huma.Operation) { o.DefaultStatus = code }
}

// MaxBody sets the largest request body, in bytes, the operation reads
// (413 beyond it).
func MaxBody(n int64) OpOption {
	return func(o *huma.Operation) { o.MaxBodyBytes = n }
}

// Fails adds codes to the error statuses the operation declares; given
// more than once, the codes add up.
func Fails(codes ...int) OpOption {
	return func(o *huma.Operation) { o.Errors = append(slices.Clone(o.Errors), codes...) }
}

// NoToken makes the operation public: it needs no token (Public).
func NoToken() OpOption {
	return func(o *huma.Operation) { o.Security = Public }
}
