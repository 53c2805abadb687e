package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// BenchmarkHTTPWrap is the HTTP timing's own cost per request: a ServeMux
// route served plain and wrapped, in one run (compare the two ns/op).
func BenchmarkHTTPWrap(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events/{eventId}/participations", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"plain", mux}, {"wrapped", metrics.NewHTTP(metrics.NewRegistry(), "asyncevent-api").Wrap(mux)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest(http.MethodPost, "/events/e1/participations", nil)
			w := httptest.NewRecorder()
			for b.Loop() {
				c.h.ServeHTTP(w, req)
			}
		})
	}
}
