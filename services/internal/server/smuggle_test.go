package server_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/smuggletest"
)

// An over-limit body gets one answer, and no request hidden in its unread
// rest runs: Serve's guard used to replace the server's own request's
// Body, which hid from net/http that the body was left unread, so it kept
// the connection and parsed the rest as further requests.
func TestOverLimitBodySmugglesNothing(t *testing.T) {
	mux := http.NewServeMux()
	api := server.NewAPI(mux, "t", "1", "", "http://127.0.0.1:8080", false)
	server.RegisterHealth(api)
	const limit = 4096
	huma.Register(api, huma.Operation{OperationID: "create", Method: http.MethodPost, Path: "/things", MaxBodyBytes: limit},
		func(ctx context.Context, in *struct {
			Body struct {
				ID string `json:"id" maxLength:"64"`
			}
		}) (*struct{}, error) {
			return nil, nil
		})
	var hidden, served atomic.Int64
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if r.Host == "smuggled" {
			hidden.Add(1)
		}
		mux.ServeHTTP(w, r)
	})
	base := serve(t, counted)
	smuggletest.Check(t, smuggletest.Target{
		Addr: base, Method: http.MethodPost, Path: "/things", Limit: limit, Prefix: `{"id":"`, Stall: true,
		Header: map[string]string{"Content-Type": "application/json"},
		Next:   smuggletest.Request{Method: http.MethodPost, Path: "/things", Body: `{"id":1}`, Status: http.StatusUnprocessableEntity},
	})
	// A body sent to a route that reads none (the liveness probe) is
	// drained or the connection closed: its requests never run either.
	smuggletest.Check(t, smuggletest.Target{Addr: base, Method: http.MethodGet, Path: "/healthz", Status: http.StatusOK})
	if n := hidden.Load(); n != 0 {
		t.Errorf("%d requests hidden in over-limit bodies ran (of %d served)", n, served.Load())
	}
}
