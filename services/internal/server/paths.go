package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
)

// guard is the middleware Serve puts in front of a service's mux. It
//
//   - answers a request whose path is not clean (an empty segment as in
//     /events//participations, or . and .. segments) with a 404: without
//     it, http.ServeMux answers those with a 307 redirect and an HTML body;
//   - answers a request whose path escapes a character that needs no
//     escape (a letter, a digit or "-._~", RFC 3986 §2.3) with a 400: a
//     load balancer's rules match the path as sent while net/http decodes
//     it, so /%6detrics would pass a rule refusing /metrics and be served
//     as /metrics. Other escapes (%2F, %23, ...) decode to characters no
//     id allows and are refused by validation, naming the parameter;
//   - turns the 404 and 405 the mux itself writes (text/plain "404 page
//     not found", "Method Not Allowed") into problem+json like Huma's other
//     errors, keeping the 405's Allow header;
//   - lower-cases the request's media type (Content-Type: Application/Json),
//     which is case-insensitive (RFC 9110 §8.3.1) but which Huma matches
//     as written, and drops a JSON type's parameters (see
//     normalizeMediaType);
//   - wraps the request body (bodyDeadline) on a copy of the request,
//     leaving the server's own request as net/http made it, and turns
//     the 500 Huma answers when reading the body fails into a 400 when
//     the client broke it (ended it before its Content-Length, sent
//     malformed chunks).
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
			strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
			writeProblem(w, r, http.StatusNotFound, "no such path: it has an empty, '.' or '..' segment (is an id missing?)")
			return
		}
		if c, ok := needlessEscape(r.URL.EscapedPath()); ok {
			writeProblem(w, r, http.StatusBadRequest, fmt.Sprintf("the path escapes %q, which needs no escape: send the path unescaped", c))
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "" {
			if n := normalizeMediaType(ct); n != ct {
				r.Header.Set("Content-Type", n)
			}
		}
		var body *bodyDeadline
		if r.Body != nil {
			// The wrapped body goes on a shallow copy, never on the
			// server's own request: net/http decides whether the
			// connection may carry another request from that request's
			// Body (how much of it is unread, whether a handler closed it
			// early). Replaced, it hid that, and the unread rest of an
			// over-limit body was read as further requests (request
			// smuggling; see TestOverLimitBodySmugglesNothing).
			r = r.WithContext(r.Context())
			body = &bodyDeadline{ReadCloser: r.Body, rc: http.NewResponseController(w)}
			r.Body = body
		}
		next.ServeHTTP(&problemWriter{ResponseWriter: w, r: r, body: body}, r)
	})
}

// needlessEscape returns the first character a path percent-escapes that
// needs no escape: an unreserved character (RFC 3986 §2.3).
func needlessEscape(path string) (byte, bool) {
	for i := strings.IndexByte(path, '%'); i >= 0 && i+2 < len(path); i = strings.IndexByte(path, '%') {
		if b, err := strconv.ParseUint(path[i+1:i+3], 16, 8); err == nil {
			if c := byte(b); c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
				return c, true
			}
		}
		path = path[i+1:]
	}
	return 0, false
}

// normalizeMediaType lower-cases the type/subtype of a Content-Type value
// and trims the space around it. A JSON type loses its parameters: JSON is
// UTF-8 whatever charset says (RFC 8259 §8.1; the body is checked), and
// Huma would read a '+' inside a parameter (a=b+c) as a structured-syntax
// suffix and refuse the type. Other types keep their parameters as sent.
func normalizeMediaType(ct string) string {
	mt, params, ok := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if !ok || mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return mt
	}
	return mt + ";" + params
}

// problemWriter rewrites a 404 or 405 written as plain text or with no
// content type (http.ServeMux's, written with http.Error) into a
// problem+json, and a 500 written after the client broke the request
// body into a 400. A handler's own problem, JSON or CBOR, passes through.
type problemWriter struct {
	http.ResponseWriter
	r        *http.Request
	body     *bodyDeadline // nil without a body
	wrote    bool          // the status is written
	replaced bool          // the handler's body is dropped: ours was written
}

func (w *problemWriter) WriteHeader(code int) {
	if w.wrote {
		w.ResponseWriter.WriteHeader(code) // net/http logs the superfluous call
		return
	}
	if code >= 200 {
		w.wrote = true
	}
	if (code == http.StatusNotFound || code == http.StatusMethodNotAllowed) && plain(w.Header().Get("Content-Type")) {
		w.replaced = true
		detail := "no such path"
		if code == http.StatusMethodNotAllowed {
			detail = "the method is not allowed on this path; the Allow header lists those that are"
		}
		writeProblem(w.ResponseWriter, w.r, code, detail)
		return
	}
	if code == http.StatusInternalServerError && w.body != nil && w.body.broken != nil {
		w.replaced = true
		writeProblem(w.ResponseWriter, w.r, http.StatusBadRequest,
			"the request body could not be read: it ended before its Content-Length, or its chunked encoding is malformed")
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *problemWriter) Write(b []byte) (int, error) {
	if w.replaced {
		return len(b), nil
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flush,
// deadlines).
func (w *problemWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush keeps streaming responses streaming.
func (w *problemWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// plain reports whether a Content-Type is absent or text/plain.
func plain(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	return mt == "" || strings.EqualFold(mt, "text/plain")
}

// problems writes the problems guard produces the way Huma writes its own
// (the ErrorModel with its $schema link and Link header, clipped by
// clipProblems), from an API whose only operation makes Huma link the
// ErrorModel schema.
var problems = func() huma.API {
	cfg := huma.DefaultConfig("problems", "1")
	cfg.Transformers = []huma.Transformer{clipProblems}
	api := humago.New(http.NewServeMux(), cfg)
	huma.Register(api, huma.Operation{OperationID: "problem", Method: http.MethodGet, Path: "/"},
		func(context.Context, *struct{}) (*struct{}, error) { return nil, nil })
	return api
}()

// writeProblem writes a problem+json with status and detail.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, detail string) {
	// http.Error set these for its plain-text body.
	w.Header().Del("Content-Type")
	w.Header().Del("X-Content-Type-Options")
	_ = huma.WriteErr(problems, humago.NewContext(nil, r, w), status, detail) // the client went away; nothing to do
}
