package server

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A handler's own plain-text error, even a 400 with Connection: close, is
// not taken for the connection loop's: net/http writes its headers sorted
// and with a Date.
func TestHandlerPlainTextIsNotAConnLoopError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		http.Error(w, "400 Bad Request", http.StatusBadRequest)
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw bytes.Buffer
	w := bufio.NewWriter(&raw)
	if err := resp.Write(w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if _, _, ok := connLoopError(raw.Bytes()); ok {
		t.Fatalf("taken for a connection-loop error:\n%s", raw.String())
	}
	if _, _, ok := connLoopError([]byte("HTTP/1.1 400 Bad Request" + connLoopHeaders + "400 Bad Request")); !ok {
		t.Fatal("the connection loop's 400 is not recognised")
	}
}
