package photoapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pacerhq/pacer/modules/photo/phototest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/photobackend"
	"github.com/pacerhq/pacer/services/internal/testkit/spectest"
)

// The API's /metrics lints clean, matches the contract, and counts photos
// and searches exactly: 1 single + a batch of 2 (one already there) are 3
// ingested, a photo by an unknown photographer is refused; each search
// kind is timed once per call; requests are timed by route.
func TestMetrics(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	k := phototest.New(ctx, t)
	v, err := auth.NewVerifier(ctx, auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	m := newMetrics(&aws.Config{}, k.DDB.Table.Name(), v)
	d := rolesDeps(photobackend.NewAPIRoles(k.Truth, k.Store, m.photo, nil), nil)
	mux := http.NewServeMux()
	api := NewAPI(mux, d, v, false)
	srv := httptest.NewServer(m.serve(mux))
	t.Cleanup(srv.Close)
	e := &env{t: t, ctx: ctx, api: spectest.Wrap(t, api), raw: api, mux: mux, ddb: k.DDB, d: d}

	e.setup("o1", "ev", "ph", true)
	tok := orgToken(t, "o1")
	e.do("POST", "/events/ev/photos", 201, tok, rec(1, "ph", "1000"))
	e.do("POST", "/events/ev/photos/batch", 200, tok, map[string]any{"photos": []any{rec(1, "ph", "1000"), rec(2, "ph", "1001")}})
	e.do("POST", "/events/ev/photos", 422, tok, rec(3, "ghost", "1000"))
	e.do("GET", "/events/ev/bibs/1000/photos", 200, tok)
	e.do("GET", "/events/ev/photos", 200, tok)
	e.do("GET", "/photographers/ph/photos", 200, tok)
	e.do("GET", "/public/events/ev/bibs/1000/photos", 200)
	e.do("GET", "/public/events/ev/bibs/1001/photos", 200)
	e.do("GET", "/events/ev/bibs/1000/nearby-photos", 200, tok)
	e.do("GET", "/public/events/ev/bibs/1000/nearby-photos", 200)
	for _, c := range []struct {
		path, token string
		status      int
	}{{"/healthz", "", 200}, {"/healthz", "", 200}, {"/nowhere", "", 404}, {"/events/ev/photos", "", 401}, {"/photographers/nope", tok, 404}} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if name, value, ok := strings.Cut(c.token, ": "); ok {
			req.Header.Set(name, value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Fatalf("GET %s: %d, want %d", c.path, resp.StatusCode, c.status)
		}
	}

	fams := metricstest.Scrape(t, srv.URL+"/metrics")
	metricstest.Check(t, fams, "pacer_http_request_duration_seconds", "pacer_photo_ingest_photos_total",
		"pacer_photo_search_duration_seconds", "pacer_aws_calls_total", "pacer_aws_consumed_capacity_units_total", "go_goroutines",
		"pacer_http_problems_total", "pacer_auth_keys", "pacer_auth_key_set_refresh_failed")
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"pacer_photo_ingest_photos_total", []string{"outcome", "ingested"}, 3},
		{"pacer_photo_ingest_photos_total", []string{"outcome", "refused"}, 1},
		{"pacer_photo_search_duration_seconds", []string{"kind", "bib"}, 1},
		{"pacer_photo_search_duration_seconds", []string{"kind", "gallery"}, 1},
		{"pacer_photo_search_duration_seconds", []string{"kind", "photographer"}, 1},
		{"pacer_photo_search_duration_seconds", []string{"kind", "public_bib"}, 2},
		{"pacer_photo_search_duration_seconds", []string{"kind", "nearby"}, 1},
		{"pacer_photo_search_duration_seconds", []string{"kind", "public_nearby"}, 1},
		{"pacer_http_request_duration_seconds", []string{"service", Job, "route", "GET /healthz", "code_class", "2xx"}, 2},
		{"pacer_http_request_duration_seconds", []string{"service", Job, "route", "unmatched", "code_class", "4xx"}, 1},
		// Each error answer by class, status and problem type; the
		// others at 0.
		{"pacer_http_problems_total", []string{"service", Job, "class", "unauthenticated", "status", "401", "type", "about:blank"}, 1},
		{"pacer_http_problems_total", []string{"service", Job, "class", "client", "status", "404", "type", "about:blank"}, 1},
		{"pacer_http_problems_total", []string{"service", Job, "class", "client", "status", "404", "type", "not-found"}, 1},
		{"pacer_http_problems_total", []string{"service", Job, "class", "client", "status", "422", "type", "invalid-input"}, 0},
		{"pacer_http_problems_total", []string{"service", Job, "class", "server", "status", "503", "type", "unavailable"}, 0},
		{"pacer_http_problems_total", []string{"service", Job, "class", "rate_limited", "status", "429", "type", "rate-limited"}, 0},
		{"pacer_auth_keys", nil, 1},
		{"pacer_auth_key_set_refresh_failed", nil, 0},
	} {
		if got := fams.Value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
