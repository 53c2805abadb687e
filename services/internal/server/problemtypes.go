package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// ProblemBase prefixes the type URI of every problem Pacer's APIs define.
// Types are absolute URIs, as RFC 9457 recommends (a relative one would
// resolve against each request's URL, one type per host), and stable:
// clients branch on them. They identify, clients need not fetch them; each
// API's spec lists its types (Errors.Doc). Problems that mean no more than
// their status (Huma's own: a request failing its schema, a missing token,
// an unknown path) keep RFC 9457's about:blank.
const ProblemBase = "https://pacer.dev/problems/"

// ProblemType is how one domain error answers.
type ProblemType struct {
	Err    error  // the domain error, matched with errors.Is
	Status int    // the HTTP status
	Name   string // the type's name; its URI is ProblemBase + Name
	// Detail, when set, replaces the error's text (which may carry a
	// dependency's error: AWS text, resource names).
	Detail string
	// Field, when set, is the request location the problem names.
	Field string
	// Headers, when set, are the answer's headers for err (Retry-After).
	Headers func(err error) http.Header
}

// The types every service shares: a failed dependency, an operation past
// its deadline, a process at its in-flight bound (Bound), and a bug.
var (
	unavailable = ProblemType{Status: http.StatusServiceUnavailable, Name: "unavailable", Detail: "a dependency is unavailable; retry after Retry-After",
		Headers: RetryLater}
	timeout = ProblemType{Status: http.StatusServiceUnavailable, Name: TimeoutProblem,
		Detail: "the operation did not finish within its deadline (a dependency is slow); a write may still take effect: retry after Retry-After", Headers: RetryLater}
	overloaded = ProblemType{Status: http.StatusServiceUnavailable, Name: OverloadedProblem,
		Detail: "the server has too many calls in flight; nothing was done: retry after Retry-After"}
	internal = ProblemType{Status: http.StatusInternalServerError, Name: "internal", Detail: "internal error"}
)

// RetryLater is the Retry-After of a 503 that a failed or slow dependency
// answers (RetryUnavailable), for a ProblemType's Headers.
func RetryLater(error) http.Header {
	return http.Header{"Retry-After": {RetryAfterSeconds(RetryUnavailable)}}
}

// Errors maps a service's domain errors to RFC 9457 problems: the one
// place, per service, where domain errors meet HTTP statuses (its
// errors.go declares Types).
type Errors struct {
	// Types are the service's domain errors, the first match wins.
	Types []ProblemType
	// Prefix is the domain package's prefix of error texts ("photo: "),
	// left out of details.
	Prefix string
	// Fields, if set, returns the per-field details of an error that names
	// fields (a validation error), or nil.
	Fields func(err error) []*huma.ErrorDetail
	// Log receives dependency failures and internal errors (default
	// slog.Default()).
	Log *slog.Logger
}

// Problem returns err as an HTTP problem: an operation's failure past its
// deadline (ErrDeadline, as Handle marks it) 503 timeout, logged; an
// error that already is one (huma.StatusError) unchanged; a domain error
// by its ProblemType; a cancelled request 499; a failed dependency
// (DependencyFailed) 503 unavailable, logged; anything else 500
// internal, logged, without its text.
func (e Errors) Problem(err error) error {
	var se huma.StatusError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrDeadline):
		return e.answer(timeout, err)
	case errors.As(err, &se):
		return err
	case errors.Is(err, context.Canceled):
		return huma.NewError(499, "request cancelled")
	}
	for _, t := range e.Types {
		if errors.Is(err, t.Err) {
			return e.answer(t, err)
		}
	}
	if DependencyFailed(err) {
		return e.answer(unavailable, err)
	}
	return e.answer(internal, err)
}

// answer is err answered as t.
func (e Errors) answer(t ProblemType, err error) error {
	log := e.Log
	if log == nil {
		log = slog.Default()
	}
	switch {
	case t.Status == http.StatusInternalServerError:
		log.Error("internal error", "err", err)
	case t.Name == timeout.Name:
		log.Warn("operation past its deadline", "err", err)
	case t.Status >= 500:
		log.Warn("dependency error", "err", err)
	}
	m := &huma.ErrorModel{Type: ProblemBase + t.Name, Title: http.StatusText(t.Status), Status: t.Status, Detail: t.Detail}
	if m.Detail == "" {
		m.Detail = strings.ReplaceAll(err.Error(), e.Prefix, "") // "" leaves it as it is
	}
	if t.Field != "" {
		m.Errors = []*huma.ErrorDetail{{Message: m.Detail, Location: t.Field}}
	}
	if e.Fields != nil && t.Status < 500 {
		if d := e.Fields(err); d != nil {
			m.Errors = d
		}
	}
	if t.Headers != nil {
		return huma.ErrorWithHeaders(m, t.Headers(err))
	}
	return m
}

// Doc describes the problem types for the API's spec, in Markdown.
func (e Errors) Doc() string {
	var b strings.Builder
	b.WriteString("**Problem types.** Errors that mean more than their status have a `type` under `" + ProblemBase + "`:\n\n" +
		"| type | status | meaning |\n|---|---|---|\n")
	seen := map[string]bool{}
	for _, t := range e.all() {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		meaning := t.Detail
		if t.Err != nil {
			meaning = strings.ReplaceAll(t.Err.Error(), e.Prefix, "")
		}
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", ProblemBase+t.Name, t.Status, meaning)
	}
	b.WriteString("\nOther errors (a request that fails its schema, a missing token, an unknown path) mean no more than their status: their type is `about:blank`.")
	return b.String()
}

// all are e's types, then the kit's shared ones.
func (e Errors) all() []ProblemType {
	return append(e.Types[:len(e.Types):len(e.Types)], unavailable, timeout, overloaded, internal)
}
