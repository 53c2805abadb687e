package server

import (
	"net/http"
	"reflect"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// statePublic gives op, if it states no security requirement, Public's:
// the spec then says that it needs no token (Authenticate reads it the
// same way).
func statePublic(_ *huma.OpenAPI, op *huma.Operation) {
	if len(op.Security) == 0 {
		op.Security = Public
	}
}

// documentServerErrors adds to op's spec the problem responses that the
// server itself, not op's handler, may answer with, by what op takes:
//
//	a bearer token (NeedsToken)   401 (missing, invalid or expired token)
//	a request body                400 (not JSON, or strict JSON refused it), 408 (body read timed out),
//	                              413 (over its MaxBodyBytes), 415 (not a JSON media type), 422
//	parameters                    422 (a parameter fails its schema)
//	a token, body or parameters,  500 (internal error, logged), 503 (a dependency is unavailable:
//	or declared errors            each service's errors.go maps every dependency failure to it)
//
// An operation with none of these (the /healthz probe) is left as it is.
// The statuses an operation's own domain errors map to (404, 409, ...) are
// in its Errors; spectest checks in the services' tests that every status
// they answer with is documented.
func documentServerErrors(oapi *huma.OpenAPI, op *huma.Operation) {
	var codes []int
	if NeedsToken(op) {
		codes = append(codes, http.StatusUnauthorized)
	}
	if op.RequestBody != nil {
		codes = append(codes, http.StatusBadRequest, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge,
			http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)
	}
	if len(op.Parameters) > 0 {
		codes = append(codes, http.StatusUnprocessableEntity)
	}
	if NeedsToken(op) || len(codes) > 0 || len(op.Errors) > 0 {
		codes = append(codes, http.StatusInternalServerError, http.StatusServiceUnavailable)
	}
	if len(codes) == 0 {
		return
	}
	if op.Responses == nil {
		op.Responses = map[string]*huma.Response{}
	}
	schema := oapi.Components.Schemas.Schema(reflect.TypeFor[huma.ErrorModel](), true, "Error")
	for _, code := range codes {
		if op.Responses[strconv.Itoa(code)] != nil {
			continue
		}
		op.Responses[strconv.Itoa(code)] = &huma.Response{
			Description: http.StatusText(code),
			Content:     map[string]*huma.MediaType{"application/problem+json": {Schema: schema}},
		}
	}
	delete(op.Responses, "default") // every error is now listed
}
