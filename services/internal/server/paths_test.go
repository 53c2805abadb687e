package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/server"
)

// Unclean paths get a problem+json 404 from Serve, not a redirect.
func TestServeRejectsUncleanPaths(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events/{id}/participations", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	base := "http://" + serve(t, mux)
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
	// Needless escapes: a load balancer rule refusing /metrics or /admin/*
	// matches the path as sent, and net/http would serve the decoded one.
	for _, p := range []string{"/events/%65%31/participations", "/%65vents/e1/participations", "/events/e1/participation%73", "/events/%7e1/participations"} {
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(body), "needs no escape") {
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

// serveAPI serves a Huma API set up as the services do (NewAPI on a
// ServeMux, through Serve) and returns its base URL.
func serveAPI(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	api := server.NewAPI(mux, "t", "1", "", "http://127.0.0.1:8080", false)
	huma.Register(api, huma.Operation{OperationID: "participate", Method: http.MethodPost, Path: "/events/{id}/participations"},
		func(ctx context.Context, in *struct {
			ID   string `path:"id" pattern:"^[a-z0-9]+$"`
			Body struct {
				Note string `json:"note,omitempty"`
			}
		}) (*struct{ Body struct{ Note string } }, error) {
			out := &struct{ Body struct{ Note string } }{}
			out.Body.Note = in.Body.Note
			return out, nil
		})
	huma.Register(api, huma.Operation{OperationID: "get-request", Method: http.MethodGet, Path: "/requests/{id}"},
		func(ctx context.Context, in *struct {
			ID string `path:"id" pattern:"^[a-z0-9]+$"`
		}) (*struct{}, error) {
			return nil, huma.Error404NotFound("request not found")
		})
	mux.HandleFunc("GET /plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"own":true}`)
	})
	return "http://" + serve(t, mux)
}

// serve serves h through Serve on loopback until t ends, and returns its
// address (host:port).
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := server.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, &http.Server{Handler: h}, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return l.Addr().String()
}

// Every 404 and 405 the mux produces is a problem+json like Huma's own
// errors (the 405 keeps its Allow header); handlers' own 404s pass through.
func TestMuxErrorsAreProblems(t *testing.T) {
	base := serveAPI(t)
	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
		detail       string // the problem's detail contains it
	}{
		{"GET", "/nope", 404, "", "no such path"},
		{"GET", "/", 404, "", "no such path"},
		{"POST", "/events/e1/participations/", 404, "", "no such path"},
		{"POST", "/events%2Fe1%2Fparticipations", 404, "", "no such path"},
		{"POST", "/events/e1%2Fx/participations", 422, "", "validation failed"},
		{"GET", "/events/e1/participations", 405, "POST", "not allowed"},
		{"DELETE", "/requests/r1", 405, "GET, HEAD", "not allowed"},
		{"GET", "/events//participations", 404, "", "empty"},
		{"GET", "/requests/r1", 404, "", "request not found"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req, err := http.NewRequest(c.method, base+c.path, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var p map[string]any
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(body, &p) != nil {
				t.Fatalf("%d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			if p["status"] != float64(c.status) || p["title"] != http.StatusText(c.status) || !strings.Contains(fmt.Sprint(p["detail"]), c.detail) ||
				!strings.HasSuffix(fmt.Sprint(p["$schema"]), "/schemas/ErrorModel.json") {
				t.Fatalf("problem %s", body)
			}
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Fatalf("Allow %q, want %q", got, c.allow)
			}
		})
	}
	resp, err := client.Get(base + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" || string(body) != `{"own":true}` {
		t.Fatalf("a handler's own JSON 404 was rewritten: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// Media types are case-insensitive (RFC 9110 §8.3.1): Application/Json is
// JSON, whatever its parameters say; other media types are still refused.
func TestContentTypeCaseInsensitive(t *testing.T) {
	base := serveAPI(t)
	client := &http.Client{Timeout: 5 * time.Second}
	for ct, status := range map[string]int{
		"application/json": 200, "Application/Json": 200, "APPLICATION/JSON; charset=utf-8": 200, " application/JSON ;charset=UTF-8": 200,
		"application/json; a=b+c": 200, "application/problem+json; x=y+z": 200,
		"text/plain": 415, "Text/Plain": 415,
	} {
		resp, err := client.Post(base+"/events/e1/participations", ct, strings.NewReader(`{"note":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("Content-Type %q: %d %s", ct, resp.StatusCode, body)
		} else if status == 200 && !strings.Contains(string(body), `"Note":"hi"`) {
			t.Errorf("Content-Type %q: body %s", ct, body)
		} else if status != 200 && resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("Content-Type %q: %d as %q", ct, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}
