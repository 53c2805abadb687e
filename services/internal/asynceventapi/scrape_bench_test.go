package asynceventapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// BenchmarkScrape is the cost of one GET /metrics on a registry shaped like
// the AsyncEvent API's after some traffic: Go and process collectors,
// 20 routes × 3 status classes, the AWS series, participations, and the
// queue and invariant gauges (served from their caches, as between their
// refreshes).
//
//	go test ./services/internal/asynceventapi -run '^$' -bench Scrape -benchmem
func BenchmarkScrape(b *testing.B) {
	reg := metrics.NewRegistry()
	h := metrics.NewHTTP(reg, "asyncevent-api")
	a := metrics.NewAWS(reg, "AsyncEventTable")
	p := asynceventapi.NewParticipations(reg, []string{"invalid-id", "event-not-found", "event-closed", "unavailable"})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	asynceventbackend.NewQueueGauge(reg, func(context.Context) (sqsqueue.Counts, sqsqueue.Counts, error) {
		return sqsqueue.Counts{Visible: 10}, sqsqueue.Counts{}, nil
	}, log)
	asynceventbackend.NewInvariant(reg, func(context.Context, int) (int, []string, error) { return 3, nil, nil }, log)
	mux := http.NewServeMux()
	for i := range 20 {
		mux.HandleFunc(fmt.Sprintf("GET /r%d/{id}", i), func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200 + 100*(len(r.PathValue("id"))%3))
		})
	}
	wrapped := h.Wrap(mux)
	for i := range 20 {
		for _, id := range []string{"a", "ab", "abc"} {
			wrapped.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/r%d/%s", i, id), nil))
		}
	}
	a.ObserveCall(context.Background(), ddb.Call{Operation: "PutItem", Table: "AsyncEventTable", Capacity: 1})
	p.Accepted(false)
	handler := metrics.Handler(reg)
	req := httptest.NewRequest("GET", metrics.Path, nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
