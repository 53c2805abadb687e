package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/server"
)

// A handler that outlives the body read timeout keeps its context: Huma's
// read deadline for the body is cleared once the body is read, so the
// connection's background read does not cancel the request (it did, after
// 5 s, under load).
func TestSlowHandlerKeepsItsContextAfterTheBodyIsRead(t *testing.T) {
	l, err := server.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api := server.NewAPI(mux, "t", "1", "t", "http://127.0.0.1", false)
	type in struct {
		Body *struct {
			N int `json:"n"`
		} `required:"false"`
	}
	type out struct {
		Body struct {
			Err string `json:"err"`
		}
	}
	huma.Register(api, huma.Operation{Method: http.MethodPost, Path: "/slow", BodyReadTimeout: 100 * time.Millisecond},
		func(ctx context.Context, _ *in) (*out, error) {
			select {
			case <-time.After(600 * time.Millisecond):
			case <-ctx.Done():
			}
			o := &out{}
			if err := ctx.Err(); err != nil {
				o.Body.Err = err.Error()
			}
			return o, nil
		})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, &http.Server{Handler: mux}, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	for _, body := range []string{`{"n":1}`, ``} {
		resp, err := client.Post("http://"+l.Addr().String()+"/slow", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || strings.Contains(string(got), "canceled") {
			t.Errorf("body %q: %d %s: the handler's context was cancelled after the body read timeout", body, resp.StatusCode, got)
		}
	}
}
