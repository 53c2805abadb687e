package server_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Requests net/http refuses in its connection loop, before any handler,
// are answered with problem+json too. They are sent over raw TCP: Go's
// client would refuse to send most of them.
func TestConnectionLoopErrorsAreProblems(t *testing.T) {
	addr := strings.TrimPrefix(serveAPI(t), "http://")
	host := "Host: " + addr + "\r\n"
	for _, c := range []struct {
		name, request string
		status        int
		detail        string // the problem's detail contains it
	}{
		{"percent alone", "POST /events/%/participations HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n", 400, "malformed"},
		{"bad escape", "POST /events/a%zz/participations HTTP/1.1\r\n" + host + "Content-Length: 0\r\n\r\n", 400, "malformed"},
		{"no host", "GET /requests/r1 HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"bad header line", "GET /requests/r1 HTTP/1.1\r\n" + host + "no colon here\r\n\r\n", 400, "malformed"},
		{"2 MiB path", "GET /events/" + strings.Repeat("a", 2<<20) + "/participations HTTP/1.1\r\n" + host + "\r\n", 431, "too large"},
		{"transfer encoding", "POST /events/e1/participations HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n", 501, "transfer encoding"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := rawRequest(t, addr, c.request)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			var p struct {
				Title  string
				Status int
				Detail string
			}
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(body, &p) != nil {
				t.Fatalf("%d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if p.Status != c.status || p.Title != http.StatusText(c.status) || !strings.Contains(p.Detail, c.detail) {
				t.Fatalf("problem %s", body)
			}
		})
	}
	// A well-formed request on the same kind of connection is untouched.
	resp := rawRequest(t, addr, "GET /requests/r1 HTTP/1.1\r\n"+host+"\r\n")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), "request not found") {
		t.Fatalf("handler's answer: %d %s", resp.StatusCode, body)
	}
}

// rawRequest writes request on a new TCP connection to addr and reads the
// response.
func rawRequest(t *testing.T, addr, request string) *http.Response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// The server may answer (and close) before it has read a long request.
	go func() { _, _ = io.WriteString(conn, request) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
