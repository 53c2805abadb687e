package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Requests that net/http cannot parse never reach a handler: its
// connection loop answers them itself, in plain text, and closes the
// connection. That is a 400 for a request line, path or header it cannot
// read (a path with '%' not followed by two hex digits, as in /events/%/x or
// /events/a%zz/x; a missing Host header; a malformed header line), a 431 for
// a request line and headers over MaxHeaderBytes, and a 501 for a transfer
// encoding it does not support. net/http has no setting to change those
// answers, so problemListener sits under it: each connection's writes are
// checked for one of those answers, which have a fixed form no handler's
// response can take (see connLoopError), and such an answer is rewritten
// into an RFC 9457 problem+json with the same status. Everything else
// passes through as written.
//
// One answer of the connection loop stays as it is: a 417 Expectation
// Failed, with an empty body, to a request with an Expect header other
// than 100-continue. net/http writes it as an ordinary response, which
// cannot be told apart from a handler's with certainty.

// errorsDescription tells API clients how errors are answered.
const errorsDescription = "**Errors** are RFC 9457 `application/problem+json` (naming the field where there is one); each operation " +
	"lists the statuses it answers with. That includes the ones the HTTP server answers before routing: 400 for a request line, path or header it cannot parse (e.g. `/events/%/participations`, " +
	"`/events/a%zz/...`), 431 for a request line and headers over 1 MiB, 501 for an unsupported transfer encoding; " +
	"these close the connection. One exception: a request with an `Expect` header other than `100-continue` gets " +
	"417 with an empty body."

// connLoopHeaders are the headers net/http's connection loop sends with its
// own plain-text errors (net/http/server.go, conn.serve: errorHeaders). An
// ordinary response always differs: its headers are sorted (Connection
// before Content-Type) and carry Date and Content-Length.
const connLoopHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// connLoopDetails are the problems' details, by status.
var connLoopDetails = map[int]string{
	http.StatusBadRequest: "the request could not be parsed: its request line, path or a header is malformed " +
		"(e.g. a '%' in the path not followed by two hex digits)",
	http.StatusRequestHeaderFieldsTooLarge: "the request line and headers are too large",
	http.StatusNotImplemented:              "unsupported transfer encoding",
}

// connLoopError reports whether b is one of net/http's connection-loop
// error answers ("HTTP/1.1 <status> <reason>" + connLoopHeaders + text),
// and returns its status and text.
func connLoopError(b []byte) (status int, text string, ok bool) {
	rest, found := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !found || len(rest) < 4 || rest[3] != ' ' {
		return 0, "", false
	}
	i := bytes.Index(rest, []byte(connLoopHeaders))
	if i < 0 || bytes.IndexByte(rest[:i], '\n') >= 0 {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(rest[:3]))
	if err != nil || status < 400 || status > 599 {
		return 0, "", false
	}
	return status, string(rest[i+len(connLoopHeaders):]), true
}

// connLoopProblem is the problem+json answer that replaces a
// connection-loop error with status and text.
func connLoopProblem(status int, text string) []byte {
	detail := connLoopDetails[status]
	// "400 Bad Request: missing required Host header" says more than ours.
	if _, why, ok := strings.Cut(text, ": "); ok && why != "" {
		detail = why
	}
	if detail == "" {
		detail = http.StatusText(status)
	}
	body, _ := json.Marshal(&huma.ErrorModel{Title: http.StatusText(status), Status: status, Detail: clipString(detail, maxDetail)}) // cannot fail
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Length: %d\r\nContent-Type: application/problem+json\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
}

// problemListener wraps each accepted connection in a problemConn.
type problemListener struct{ net.Listener }

func (l problemListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return problemConn{c}, nil
}

// problemConn rewrites net/http's connection-loop errors into problem+json.
type problemConn struct{ net.Conn }

func (c problemConn) Write(b []byte) (int, error) {
	status, text, ok := connLoopError(b)
	if !ok {
		return c.Conn.Write(b)
	}
	if _, err := c.Conn.Write(connLoopProblem(status, text)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// CloseWrite half-closes the connection, as net/http does after a 431 so
// that the client can read it before the connection is reset.
func (c problemConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
