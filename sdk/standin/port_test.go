package standin

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The port a stand-in is given can be taken between the pick and the
// stand-in's bind (by another test binary's stand-in, or a test server).
// DynamoDB Local then stays up without serving, and whatever holds the port
// answers in its stead: it is started again on another port, and only a
// port it listens on itself counts as ready.
func TestDynamoDBMovesOffATakenPort(t *testing.T) {
	dir, err := findDir("")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var impostorHits atomic.Int64
	impostor := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		impostorHits.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"impostor"}`)
	})}
	go func() { _ = impostor.Serve(l) }()
	defer impostor.Close()
	taken := l.Addr().(*net.TCPAddr).Port

	var picks atomic.Int64
	pickPort = func() (int, error) {
		if picks.Add(1) == 1 {
			return taken, nil
		}
		return freePort()
	}
	defer func() { pickPort = freePort }()

	p, endpoint, err := startDynamoDB(context.Background(), Config{Dir: dir, StartTimeout: 60 * time.Second, Log: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.stop() }()
	if picks.Load() != 2 || strings.HasSuffix(endpoint, ":"+strconv.Itoa(taken)) || impostorHits.Load() == 0 {
		t.Fatalf("endpoint %s after %d picks (taken port %d answered %d times)", endpoint, picks.Load(), taken, impostorHits.Load())
	}
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader("{}"))
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// DynamoDB Local answers an unsigned call with its own error type.
	if !strings.Contains(string(body), "com.amazonaws.dynamodb") {
		t.Fatalf("ListTables at %s: %s %s, want DynamoDB Local's answer", endpoint, resp.Status, body)
	}
}

// owns tells a port the process listens on from one it does not.
func TestOwnsTellsWhoListens(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	me := &process{name: "this test", cmd: &exec.Cmd{Process: self}}
	if err := me.owns(l.Addr().(*net.TCPAddr).Port); err != nil {
		t.Errorf("own listener: %v", err)
	}
	free, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := me.owns(free); err == nil {
		t.Errorf("port %d that nothing listens on counts as ours", free)
	}
}
