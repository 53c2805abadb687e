package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Unmatched is the route label of a request no route matched.
const Unmatched = "unmatched"

// HTTP times an API's requests: pacer_http_request_duration_seconds by
// service, route and code_class.
type HTTP struct {
	service  string
	duration *prometheus.HistogramVec
}

// NewHTTP registers the HTTP histogram on reg for service (the scrape job:
// "asyncevent-api", "photo-api").
func NewHTTP(reg prometheus.Registerer, service string) *HTTP {
	h := &HTTP{service: service, duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pacer_http_request_duration_seconds",
		Help:    "Time from request to last byte, by route (the matched pattern, method first) and status class.",
		Buckets: CallBuckets,
	}, []string{"service", "route", "code_class"})}
	reg.MustRegister(h.duration)
	return h
}

// Wrap returns next timed. The route is the http.ServeMux pattern that
// matched (Request.Pattern, which ServeMux sets on the request it is given,
// so next must be, or end in, the ServeMux that routes), "unmatched" when
// none did.
func (h *HTTP) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = Unmatched
		}
		h.duration.WithLabelValues(h.service, route, codeClass(sw.status)).Observe(time.Since(start).Seconds())
	})
}

func codeClass(status int) string {
	switch {
	case status == 0 || status < 300: // nothing written is a 200
		return "2xx"
	case status < 400:
		return "3xx"
	case status < 500:
		return "4xx"
	}
	return "5xx"
}

// statusWriter records the status written. Unwrap lets
// http.ResponseController reach the connection (flush, deadlines).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
