package server

import (
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// noteProblem is the transformer that tells the problems metric
// (metrics.HTTP's pacer_http_problems_total) the type of every problem
// the API answers: Huma's own, a handler's, a middleware's (401, 429),
// through the response writer (metrics.NoteProblem). It changes nothing.
func noteProblem(ctx huma.Context, _ string, v any) (any, error) {
	if m, ok := v.(*huma.ErrorModel); ok && m != nil {
		metrics.NoteProblem(ctx.BodyWriter(), ProblemTypeLabel(m.Type))
	}
	return v, nil
}

// ProblemTypeLabel is the problems metric's type label of a problem type
// URI: its name under ProblemBase, metrics.NoProblemType for a problem
// that means no more than its status (about:blank, or none), "other" for
// any other URI (which no API answers: the label's values stay the
// declared names).
func ProblemTypeLabel(typ string) string {
	switch name, ours := strings.CutPrefix(typ, ProblemBase); {
	case typ == "" || typ == "about:blank":
		return metrics.NoProblemType
	case ours && name != "":
		return name
	}
	return "other"
}

// Problems are the problems an API whose domain errors are e may answer,
// as the problems metric labels them (metrics.HTTP.InitProblems): e's
// types, the kit's shared ones (unavailable, timeout, overloaded,
// internal, rate-limited), and the statuses the kit and Huma answer with
// about:blank (a refused body or parameter, a missing or invalid token, a
// missing role, no such path or method, a cancelled request).
func (e Errors) Problems() []metrics.Problem {
	var out []metrics.Problem
	seen := map[metrics.Problem]bool{}
	add := func(p metrics.Problem) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, t := range e.all() {
		add(metrics.Problem{Status: t.Status, Type: t.Name})
	}
	add(metrics.Problem{Status: http.StatusTooManyRequests, Type: RateLimitedProblem})
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusMethodNotAllowed, http.StatusRequestTimeout, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
		http.StatusUnprocessableEntity, 499} {
		add(metrics.Problem{Status: status, Type: metrics.NoProblemType})
	}
	return out
}
