package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/services/internal/server"
)

// Unclean paths get a problem+json 404 from Serve, not a redirect.
func TestServeRejectsUncleanPaths(t *testing.T) {
	l, err := server.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events/{id}/participations", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, &http.Server{Handler: mux}, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "http://" + l.Addr().String()
	for _, p := range []string{"/events//participations", "/events/a/../b/participations", "/events/./x/participations"} {
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(body), `"status":404`) {
			t.Errorf("%s: %d %s %s", p, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	resp, err := client.Get(base + "/events/e1/participations")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("clean path: %d", resp.StatusCode)
	}
}
