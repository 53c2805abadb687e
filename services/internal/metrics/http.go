package metrics

import (
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Unmatched is the route label of a request no route matched.
const Unmatched = "unmatched"

// NoProblemType is the type label of an error answer whose writer noted
// no problem type (NoteProblem): a problem that means no more than its
// status (RFC 9457's about:blank, as Huma's own and ServeMux's are), or
// an answer that is no problem document.
const NoProblemType = "about:blank"

// HTTP times an API's requests (pacer_http_request_duration_seconds by
// service, route and code_class) and counts its error answers
// (pacer_http_problems_total by service, class, status and problem type).
type HTTP struct {
	service  string
	duration *prometheus.HistogramVec
	problems *prometheus.CounterVec
}

// NewHTTP registers the HTTP metrics on reg for service (the scrape job:
// "asyncevent-api", "photo-api"), with the problems the service may
// answer at 0 (InitProblems).
func NewHTTP(reg prometheus.Registerer, service string, problems ...Problem) *HTTP {
	h := &HTTP{service: service, duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "pacer_http_request_duration_seconds",
		Help:    "Time from request to last byte, by route (the matched pattern, method first) and status class.",
		Buckets: CallBuckets,
	}, []string{"service", "route", "code_class"}),
		problems: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_http_problems_total",
			Help: "Answers with a 4xx or 5xx status, by class (unauthenticated, rate_limited, cancelled, client, server), status and problem type (its name under the APIs' problem base, or about:blank).",
		}, []string{"service", "class", "status", "type"}),
	}
	reg.MustRegister(h.duration, h.problems)
	h.InitProblems(problems...)
	return h
}

// Problem is one kind of error answer: its status and problem type (the
// type label: a name, or NoProblemType).
type Problem struct {
	Status int
	Type   string
}

// InitProblems starts the problems' series at 0, so that their rates are
// 0, not absent, before the first one is answered.
func (h *HTTP) InitProblems(ps ...Problem) {
	for _, p := range ps {
		h.problems.WithLabelValues(h.service, ProblemClass(p.Status), strconv.Itoa(p.Status), p.Type)
	}
}

// ProblemClass is the class label of an error status, the groups the
// alarms read: 401 unauthenticated, 429 rate_limited, 499 (the client
// went away) cancelled, another 4xx client, 5xx server.
func ProblemClass(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "unauthenticated"
	case status == http.StatusTooManyRequests:
		return "rate_limited"
	case status == 499:
		return "cancelled"
	case status >= 500:
		return "server"
	}
	return "client"
}

// NoteProblem tells the problems metric the type (label) of the problem
// w answers: w is the writer Wrap gave the routes, or one that unwraps
// to it (Unwrap() http.ResponseWriter); with any other it does nothing.
// Whatever writes a problem document calls it (the server kit's Huma
// transformer does, for every problem an API answers).
func NoteProblem(w io.Writer, typ string) {
	for w != nil {
		if sw, ok := w.(*statusWriter); ok {
			sw.problem = typ
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
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
		if sw.status >= 400 {
			typ := sw.problem
			if typ == "" {
				typ = NoProblemType
			}
			h.problems.WithLabelValues(h.service, ProblemClass(sw.status), strconv.Itoa(sw.status), typ).Inc()
		}
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

// statusWriter records the status written, and the problem type noted
// (NoteProblem). Unwrap lets http.ResponseController reach the connection
// (flush, deadlines).
type statusWriter struct {
	http.ResponseWriter
	status  int
	problem string
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
