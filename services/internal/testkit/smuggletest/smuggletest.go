// Package smuggletest checks, over raw TCP, that an HTTP server answers a
// request whose body is over its limit exactly once and never reads the
// unread rest of that body as further requests (HTTP request smuggling).
//
// Check sends, for one operation with a body limit, bodies over the limit
// with a request hidden right after the limit, at several sizes of unread
// rest (drained by net/http, just over its 256 KB drain, many MB), both
// with a Content-Length and chunked, and a body shorter than its
// Content-Length, ended or (Target.Stall) stalled. Each must get one answer; then the connection is either
// closed or answers a valid next request correctly, and nothing more.
//
// CheckAPI runs Check on every operation of a Huma API that takes a body.
//
//	smuggletest.CheckAPI(t, api, smuggletest.Target{Addr: l.Addr().String(), Header: map[string]string{"Authorization": "Bearer " + tok}})
package smuggletest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// DefaultHidden is the request each probe hides in an over-limit body
// (request line and headers, without Content-Length): the services'
// liveness probe, which answers 200 to anyone.
const DefaultHidden = "GET /healthz HTTP/1.1\r\nHost: smuggled\r\n"

// drain is how much of an unread body net/http reads after a handler to
// keep the connection (its maxPostHandlerReadBytes).
const drain = 256 << 10

// Request is a request sent on a connection after a probe's answer.
type Request struct {
	Method, Path string
	Body         string
	// Status is the answer it must get.
	Status int
}

// Target is one operation that limits its body.
type Target struct {
	Addr         string            // the server's host:port
	Method, Path string            // the operation's
	Header       map[string]string // sent with every request (Authorization, Content-Type)
	Limit        int               // the operation's MaxBodyBytes; 0 for a route that reads no body
	Prefix       string            // how each body starts, e.g. `{"eventId":"`
	// Status is the answer to an over-limit body (default 413, as a
	// problem+json); for a route that reads no body (Limit 0), its own
	// answer.
	Status int
	// Hidden is the request hidden in each over-limit body: its request
	// line and headers, each line ended by CRLF, without Content-Length
	// (it is sent with none: a request that needs no body, default
	// DefaultHidden). Hide one that would write, to check that
	// nothing was written. Its answer must not be Next.Status.
	Hidden string
	// Stall adds the probe that stops sending mid-body and waits for the
	// operation's body read timeout (Huma's default: 5 s).
	Stall bool
	// Next is sent on the connection after an answer if the server kept
	// it open; its Status must not be 200, the hidden request's. The
	// default is a GET of a path no service has (404).
	Next Request
}

// pathParam is a path parameter in an OpenAPI path template.
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// CheckAPI runs Check, as a subtest per operation, on every operation of
// api that takes a request body (the stalled-body probe on the first
// only), with base's Addr, Header (a token with the rights to reach the
// body) and Hidden. It fails if api has no such operation.
func CheckAPI(t *testing.T, api huma.API, base Target) {
	t.Helper()
	var names []string
	targets := map[string]Target{}
	for path, item := range api.OpenAPI().Paths {
		for method, op := range map[string]*huma.Operation{
			http.MethodPost: item.Post, http.MethodPut: item.Put, http.MethodPatch: item.Patch, http.MethodDelete: item.Delete,
		} {
			if op == nil || op.RequestBody == nil || op.MaxBodyBytes <= 0 {
				continue
			}
			name := method + " " + path
			names = append(names, name)
			tg := base
			tg.Method, tg.Path, tg.Limit, tg.Prefix = method, pathParam.ReplaceAllString(path, "probe1"), int(op.MaxBodyBytes), `{"probe":"`
			targets[name] = tg
		}
	}
	if len(names) == 0 {
		t.Fatal("smuggletest: the API has no operation that takes a body")
	}
	slices.Sort(names)
	// The group returns once its parallel subtests are done, so the
	// caller's server outlives them.
	t.Run("operations", func(t *testing.T) {
		for i, name := range names {
			tg := targets[name]
			tg.Stall = i == 0 // the body read timeout is the same everywhere, and a stall holds a parallel slot for it
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				Check(t, tg)
			})
		}
	})
}

// Check runs every probe against tg, each on its own connection, in
// parallel subtests of t, and returns when they are done.
func Check(t *testing.T, tg Target) {
	t.Helper()
	if tg.Status == 0 {
		tg.Status = http.StatusRequestEntityTooLarge
	}
	if tg.Hidden == "" {
		tg.Hidden = DefaultHidden
	}
	if tg.Next.Path == "" {
		tg.Next = Request{Method: http.MethodGet, Path: "/smuggletest/next", Status: http.StatusNotFound}
	}
	if tg.Next.Status == http.StatusOK {
		t.Fatal("smuggletest: Next.Status must differ from the hidden request's 200")
	}
	// The group returns once its parallel subtests are done.
	t.Run("probes", func(t *testing.T) {
		for _, unread := range []int{1 << 10, drain + 1, 8 << 20} {
			for _, chunked := range []bool{false, true} {
				t.Run(fmt.Sprintf("unread=%d/chunked=%t", unread, chunked), func(t *testing.T) {
					t.Parallel()
					tg.overLimit(t, unread, chunked)
				})
			}
		}
		for _, stall := range []bool{false, true} {
			if (stall && !tg.Stall) || tg.Limit == 0 { // a route that reads no body has no short-body answer
				continue
			}
			t.Run(fmt.Sprintf("short-body/stalled=%t", stall), func(t *testing.T) {
				t.Parallel()
				tg.shortBody(t, stall)
			})
		}
	})
}

// overLimit sends a body over the limit whose bytes past the limit are a
// bodiless request (tg.Hidden) followed by filler, unread bytes after the
// limit in all.
func (tg Target) overLimit(t *testing.T, unread int, chunked bool) {
	hidden := tg.Hidden + "Content-Length: 0\r\n\r\n"
	body := tg.Prefix + strings.Repeat("a", tg.Limit-len(tg.Prefix)) + hidden + strings.Repeat("x", unread-len(hidden))
	if len(body)-tg.Limit != unread {
		t.Fatalf("smuggletest: built %d unread bytes, want %d", len(body)-tg.Limit, unread)
	}
	conn := dial(t, tg.Addr)
	req := tg.head(tg.Method, tg.Path)
	if chunked {
		req += "Transfer-Encoding: chunked\r\n\r\n"
	} else {
		req += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))
	}
	// The server may answer and close before it has read it all, so the
	// body goes on in the background while the answer is read.
	go func() {
		w := bufio.NewWriterSize(conn, 64<<10)
		_, _ = io.WriteString(w, req)
		if !chunked {
			_, _ = io.WriteString(w, body)
		} else {
			for rest := body; rest != ""; {
				n := min(len(rest), 32<<10)
				_, _ = fmt.Fprintf(w, "%x\r\n%s\r\n", n, rest[:n])
				rest = rest[n:]
			}
			_, _ = io.WriteString(w, "0\r\n\r\n")
		}
		_ = w.Flush() // a write after the server closed fails: expected
	}()
	tg.expectOneAnswer(t, conn, tg.Status)
}

// shortBody sends a body shorter than its Content-Length, then closes
// its side, or (stalled) sends nothing more until the operation's body
// read timeout: one 4xx answer, then the connection is closed.
func (tg Target) shortBody(t *testing.T, stalled bool) {
	conn := dial(t, tg.Addr)
	req := tg.head(tg.Method, tg.Path) + fmt.Sprintf("Content-Length: %d\r\n\r\n", tg.Limit/2) + tg.Prefix
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	if !stalled {
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReader(conn)
	resp := read(t, r, "the answer to a body shorter than its Content-Length")
	if resp.status < 400 || resp.status > 499 {
		t.Errorf("a body shorter than its Content-Length (stalled %t): %d, want a 4xx", stalled, resp.status)
	}
	expectClosed(t, r)
}

// expectOneAnswer reads the answer to a probe, which must have status;
// then the connection must be closed, or answer tg.Next (and nothing
// else) if the server kept it.
func (tg Target) expectOneAnswer(t *testing.T, conn net.Conn, status int) {
	t.Helper()
	r := bufio.NewReader(conn)
	resp := read(t, r, "the answer to the over-limit body")
	if resp.status != status || (status >= 400 && resp.contentType != "application/problem+json") {
		t.Fatalf("over-limit body: %d %s, want %d (a problem+json if an error)", resp.status, resp.contentType, status)
	}
	if resp.close {
		expectClosed(t, r)
		return
	}
	// Kept open: the body was drained, and the next request must be
	// answered as itself, not as the hidden one (or as leftover bytes).
	next := tg.head(tg.Next.Method, tg.Next.Path) + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(tg.Next.Body)) + tg.Next.Body
	if _, err := io.WriteString(conn, next); err != nil {
		t.Fatalf("the server kept the connection, but the next request could not be sent: %v", err)
	}
	resp = read(t, r, "the answer to the next request")
	if resp.status != tg.Next.Status {
		t.Fatalf("the next request on the kept connection got %d, want %d (a request hidden in the body was answered, or the body's rest was read as a request)",
			resp.status, tg.Next.Status)
	}
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if b, err := r.Peek(1); err == nil {
		t.Fatalf("more than one answer per request: the server wrote %q... after the next request's answer", b)
	}
}

// head is a request line and the target's headers, without the
// body-framing header and the blank line.
func (tg Target) head(method, path string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, tg.Addr)
	for k, v := range tg.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	return b.String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	return conn
}

// answer is what a probe needs of a response.
type answer struct {
	status      int
	contentType string
	close       bool // Connection: close
}

// read reads one response, with its body.
func read(t *testing.T, r *bufio.Reader, what string) answer {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("%s: its body: %v", what, err)
	}
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), close: resp.Close}
}

// expectClosed checks that the server writes nothing more and closes the
// connection (an end of file, or a reset from the unread bytes left).
func expectClosed(t *testing.T, r *bufio.Reader) {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a second answer after the connection was to close: %s (a request hidden in the body ran)", resp.Status)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server neither closed the connection nor answered anything more")
	}
}
