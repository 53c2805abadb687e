package server

import (
	"context"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
)

// The statuses of a readiness check and of the report (those of the IETF
// draft "Health Check Response Format for HTTP APIs"): pass, works; warn,
// works but needs attention; fail, does not work.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
)

// ReadyCheck is one dependency's state in the readiness report.
type ReadyCheck struct {
	Name   string `json:"name" example:"jwt-key-set" doc:"The dependency: jwt-key-set (the identity provider's signing keys), human-check (the challenge provider)"`
	Status string `json:"status" enum:"pass,warn,fail" doc:"pass: it works; warn: it works but needs attention; fail: what needs it fails"`
	Output string `json:"output,omitempty" doc:"What is wrong, and what it means for callers, in words (no address, no secret)"`
	// LastSuccessAt and LastFailureAt are epoch milliseconds; 0 (left
	// out) when it has not happened.
	LastSuccessAt int64 `json:"lastSuccessAt,omitempty" doc:"When it last worked, epoch milliseconds; absent if never"`
	LastFailureAt int64 `json:"lastFailureAt,omitempty" doc:"When it last failed, epoch milliseconds; absent if never"`
}

// Checker reports one dependency's state. It makes no call of its own:
// it reads what the process has seen (the key set's fetches, the calls
// the requests made), so the report costs nothing and cannot be used to
// make the service call out.
type Checker func() ReadyCheck

// ReadyReport is the body of GET /readyz.
type ReadyReport struct {
	Status string       `json:"status" enum:"pass,warn,fail" doc:"fail if any check fails, else warn if any warns, else pass"`
	Checks []ReadyCheck `json:"checks" nullable:"false"`
}

// ReadyOutput is GET /readyz's answer: 200 unless a check fails, 503 then.
type ReadyOutput struct {
	Status int
	Body   ReadyReport
}

const readyDescription = "A readiness report: the state of what the API needs from outside its own AWS resources, as the process has seen it " +
	"(the identity provider's key set, fetched every 5 minutes; the human-check provider, as the last participation that needed it found it). " +
	"It makes no call. 503 when a check fails: the API serves, but answers that need the dependency fail " +
	"(401 to every token without a key set; 503 human-check-unavailable, or an admission without the check, per the event). " +
	"It is a report for operators and monitors, not a probe: the load balancer's and the orchestrator's probe is /healthz, " +
	"so an outage of an outside provider neither drains nor restarts the tasks."

// RegisterReady adds GET /readyz, public (the report says whether tokens
// can be verified, so it cannot need one), answering the checks' report.
func RegisterReady(api huma.API, checks ...Checker) {
	op := Op("readyz", http.MethodGet, "/readyz", "Readiness report", TagHealth, NoToken(), Describe(readyDescription))
	schema := api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ReadyReport](), true, "ReadyReport")
	op.Responses = map[string]*huma.Response{
		"503": {Description: "A check fails: answers that need that dependency fail", Content: map[string]*huma.MediaType{"application/json": {Schema: schema}}},
	}
	huma.Register(api, op, func(context.Context, *struct{}) (*ReadyOutput, error) {
		out := &ReadyOutput{Status: http.StatusOK, Body: ReadyReport{Status: Pass, Checks: []ReadyCheck{}}}
		for _, c := range checks {
			ch := c()
			out.Body.Checks = append(out.Body.Checks, ch)
			switch {
			case ch.Status == Fail:
				out.Body.Status, out.Status = Fail, http.StatusServiceUnavailable
			case ch.Status == Warn && out.Body.Status == Pass:
				out.Body.Status = Warn
			}
		}
		return out, nil
	})
}

// KeySetCheck is the check of v's key set (auth.Verifier.KeySet, read
// at each report: KeySetStatusCheck).
func KeySetCheck(v *auth.Verifier) Checker {
	return func() ReadyCheck {
		if v == nil {
			return ReadyCheck{Name: "jwt-key-set", Status: Pass, Output: "no token verification"}
		}
		return KeySetStatusCheck(v.KeySet())
	}
}

// KeySetState is v's key set as the metrics kit's gauges read it
// (metrics.NewKeySet): the keys held, and whether the last fetch failed;
// nil without a verifier.
func KeySetState(v *auth.Verifier) func() (keys int, failing bool) {
	if v == nil {
		return nil
	}
	return func() (int, bool) {
		s := v.KeySet()
		return s.Keys, s.Failing()
	}
}

// KeySetStatusCheck is the key set's check in state s: fail while it
// holds no key (every token is refused), warn while its last fetch failed
// (the keys held verify; one rotated in since does not), else pass. An
// HS256 secret always passes.
func KeySetStatusCheck(s auth.KeySetStatus) ReadyCheck {
	c := ReadyCheck{Name: "jwt-key-set", Status: Pass}
	if !s.Remote {
		c.Output = "an HS256 secret: no identity provider"
		return c
	}
	c.LastSuccessAt, c.LastFailureAt = EpochMillis(s.LoadedAt), EpochMillis(s.FailedAt)
	switch {
	case s.Keys == 0 && s.LoadedAt.IsZero():
		c.Status, c.Output = Fail, "the identity provider's key set was never loaded: every token is refused (401)"
	case s.Keys == 0:
		c.Status, c.Output = Fail, "the identity provider's key set is empty: every token is refused (401)"
	case s.Failing():
		c.Status, c.Output = Warn, "the last fetch of the identity provider's key set failed: tokens signed with the keys held verify, a key rotated in since does not"
	}
	return c
}

// EpochMillis is t in epoch milliseconds (the APIs' times), 0 for the
// zero time (a check's time that has not happened).
func EpochMillis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
