// Package spectest checks, in tests, that a Huma API answers only what its
// OpenAPI spec documents: every response's status must be listed for its
// operation, and a response with a body must have a schema for its media
// type there. Tests drive an API through Wrap instead of humatest.Wrap, so
// every request any test makes is checked; a status a handler can return
// but the spec omits (a 409 from a domain error, a 200 without a schema)
// fails the test that produced it.
package spectest

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"
)

// Wrap returns a humatest.TestAPI for api whose every response is checked
// against api's spec (see Handler).
func Wrap(t testing.TB, api huma.API) humatest.TestAPI {
	return humatest.Wrap(t, checkedAPI{API: api, adapter: checkedAdapter{Adapter: api.Adapter(), h: Handler(t, api, api.Adapter())}})
}

// Handler returns next with every response checked against api's spec:
// a response to one of api's operations fails t unless the operation
// lists its status and, when it has a body, a schema for its media type.
// Requests that match no operation (the mux's own 404 and 405) are not
// checked.
func Handler(t testing.TB, api huma.API, next http.Handler) http.Handler {
	ops := http.NewServeMux()
	byPattern := map[string]*huma.Operation{}
	for path, item := range api.OpenAPI().Paths {
		for method, op := range map[string]*huma.Operation{
			http.MethodGet: item.Get, http.MethodPut: item.Put, http.MethodPost: item.Post, http.MethodDelete: item.Delete,
			http.MethodPatch: item.Patch, http.MethodHead: item.Head, http.MethodOptions: item.Options,
		} {
			if op != nil {
				pattern := method + " " + path
				ops.HandleFunc(pattern, func(http.ResponseWriter, *http.Request) {})
				byPattern[pattern] = op
			}
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := ops.Handler(r)
		op := byPattern[pattern]
		if op == nil {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		if err := Check(op, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len()); err != "" {
			t.Errorf("%s %s answered %d, which the spec does not document: %s (body %.300s)", r.Method, r.URL.Path, rec.Code, err, rec.Body.String())
		} else if errs := CheckBody(api.OpenAPI().Components.Schemas, op, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Bytes()); len(errs) > 0 {
			t.Errorf("%s %s answered %d with a body its schema does not describe: %v (body %.300s)", r.Method, r.URL.Path, rec.Code, errs, rec.Body.String())
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes()) // a recorder or a test server's client; nothing to do on error
	})
}

// Check says what op's spec lacks to document a response with status, the
// media type of contentType, and bodyLen bytes of body ("" when nothing).
func Check(op *huma.Operation, status int, contentType string, bodyLen int) string {
	resp := op.Responses[strconv.Itoa(status)]
	if resp == nil {
		return "operation " + op.OperationID + " lists no " + strconv.Itoa(status) + " response"
	}
	if bodyLen == 0 {
		return ""
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "the response's Content-Type " + strconv.Quote(contentType) + " is not a media type"
	}
	if c := resp.Content[mt]; c == nil || c.Schema == nil {
		return "operation " + op.OperationID + "'s " + strconv.Itoa(status) + " response has no schema for " + mt
	}
	return ""
}

// CheckBody validates a JSON response body against op's schema for
// status, as a client generated from the spec would read it: a field the
// schema lacks (most schemas forbid additional properties), a missing
// required one or a wrong type is an error. Other media types and empty
// bodies are not checked.
func CheckBody(reg huma.Registry, op *huma.Operation, status int, contentType string, body []byte) []string {
	mt, _, _ := mime.ParseMediaType(contentType)
	resp := op.Responses[strconv.Itoa(status)]
	if len(body) == 0 || resp == nil || resp.Content[mt] == nil || resp.Content[mt].Schema == nil ||
		(mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	res := &huma.ValidateResult{}
	huma.Validate(reg, resp.Content[mt].Schema, huma.NewPathBuffer([]byte{}, 0), huma.ModeReadFromServer, v, res)
	out := make([]string, 0, len(res.Errors))
	for _, e := range res.Errors {
		out = append(out, e.Error())
	}
	return out
}

// checkedAPI is api with its adapter replaced by a checked one, which is
// what humatest's requests go through.
type checkedAPI struct {
	huma.API
	adapter huma.Adapter
}

func (a checkedAPI) Adapter() huma.Adapter { return a.adapter }

// checkedAdapter serves through the checked handler.
type checkedAdapter struct {
	huma.Adapter
	h http.Handler
}

func (a checkedAdapter) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.h.ServeHTTP(w, r) }
