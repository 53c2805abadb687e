package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

// Limits are an API's rate limits (docs/ratelimit.md): the limiter and
// the proxies whose X-Forwarded-For names the client.
type Limits struct {
	Limiter *ratelimit.Limiter
	Proxies ratelimit.Proxies
}

// RateLimit installs middleware that limits the operations classes
// names (operation id → class) by the caller's user id and client
// address, answering 429 problem+json with Retry-After past the budget.
// Admins are not limited (operators' tools poll many requests). Install it
// after Authenticate and before the operations: middlewares apply to the
// operations registered after them. A nil Limiter limits nothing.
func RateLimit(api huma.API, l Limits, classes map[string]string) {
	if l.Limiter == nil {
		return
	}
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		class := ""
		if op != nil {
			class = classes[op.OperationID]
		}
		if class == "" {
			next(ctx)
			return
		}
		user := ""
		if p, ok := PrincipalFrom(ctx.Context()); ok {
			if p.Has(auth.RoleAdmin) {
				next(ctx)
				return
			}
			user = p.UserID
		}
		ip := ClientIPFrom(ctx.Context()) // ClientIP's, when it runs first
		if ip == "" {
			ip = l.Proxies.ClientIP(ctx.RemoteAddr(), ctx.Header("X-Forwarded-For"))
		}
		ok, after := l.Limiter.Allow(class, user, ratelimit.AddressKey(ip))
		if ok {
			next(ctx)
			return
		}
		ctx.SetHeader("Retry-After", RetryAfterSeconds(after))
		writeHumaProblem(api, ctx, &huma.ErrorModel{Type: ProblemBase + RateLimitedProblem, Title: http.StatusText(http.StatusTooManyRequests),
			Status: http.StatusTooManyRequests, Detail: "too many " + class + " calls, past this deployment's rate limit: retry after the Retry-After seconds"})
	})
}

// RateLimitedProblem is the problem type (after ProblemBase) of every 429
// a rate limit answers: the deployment's (RateLimit) and a domain's own
// (an event's budget).
const RateLimitedProblem = "rate-limited"

// writeHumaProblem answers m as problem+json, as Huma answers its errors.
func writeHumaProblem(api huma.API, ctx huma.Context, m *huma.ErrorModel) {
	const ct = "application/problem+json"
	ctx.SetHeader("Content-Type", ct)
	ctx.SetStatus(m.Status)
	v, err := api.Transform(ctx, strconv.Itoa(m.Status), m)
	if err != nil {
		return // the status is written; a transformer's failure leaves the body empty
	}
	_ = api.Marshal(ctx.BodyWriter(), ct, v) // the client went away; nothing to do
}

// DocumentRetryAfter documents the Retry-After header of every 429 and
// 503 answer in api's spec (Huma writes the error responses without it),
// and says in each 503's description why it comes: a failed dependency,
// the operation's deadline (its class's, with the default: Bounds), or
// the in-flight bound. Call it once the operations are registered.
func DocumentRetryAfter(api huma.API) {
	header := func(what string) map[string]*huma.Param {
		return map[string]*huma.Param{"Retry-After": {Description: what, Schema: &huma.Schema{Type: huma.TypeInteger, Minimum: new(1.0)}}}
	}
	for _, item := range api.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil {
				continue
			}
			if r := op.Responses["429"]; r != nil {
				r.Description = "Too Many Requests: past a rate limit (docs/ratelimit.md); nothing was done. Retry after Retry-After seconds."
				r.Headers = header("Whole seconds until a call would be allowed")
			}
			if r := op.Responses["503"]; r != nil && !slices.Contains(op.Tags, TagHealth) {
				class := OperationClass(op)
				r.Description = fmt.Sprintf("Service Unavailable: a dependency failed (`unavailable`), the operation did not finish within its deadline "+
					"(`timeout`: the %s deadline, PACER_DEADLINE_%s, %s by default; a write may still take effect, and retrying it is safe), "+
					"or the server is at its in-flight bound (`overloaded`: nothing was done). Retry after Retry-After seconds.",
					class, strings.ToUpper(class), Bounds{}.withDefaults().deadline(class))
				r.Headers = header("Whole seconds before a retry is worth making")
			}
		}
	}
}

// RetryAfterSeconds is d as a Retry-After value: whole seconds, rounded
// up.
func RetryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// Default budgets (deployment-wide; docs/ratelimit.md).
const (
	DefaultParticipateUser = "20/m"
	DefaultPollUser        = "5/s"
)

// LimitSettings are the AsyncEvent API's rate-limit settings as declared
// (strings as ratelimit.ParseRule reads them).
type LimitSettings struct {
	ParticipateUser, PollUser       string
	ParticipateAddress, PollAddress string
	LimitSharing
}

// Declare declares the settings on s.
func (ls *LimitSettings) Declare(s *config.Set) {
	s.String(&ls.ParticipateUser, "rate-participate-user", "PACER_RATE_PARTICIPATE_USER", DefaultParticipateUser, "participations one user may make, deployment-wide (N/s, N/m, N/h or off)")
	s.String(&ls.PollUser, "rate-poll-user", "PACER_RATE_POLL_USER", DefaultPollUser, "status polls one user may make, deployment-wide (N/s, N/m, N/h or off)")
	s.String(&ls.ParticipateAddress, "rate-participate-address", "PACER_RATE_PARTICIPATE_ADDRESS", "off", "participations from one client address, deployment-wide (an IPv6 address counts as its /64)")
	s.String(&ls.PollAddress, "rate-poll-address", "PACER_RATE_POLL_ADDRESS", "off", "status polls from one client address, deployment-wide")
	ls.LimitSharing.Declare(s)
}

// Limits parses the settings into an API's Limits; an error names the
// setting at fault. The zero LimitSettings (a Config built without
// Declare) limits nothing. refused, if set, hears each refusal.
func (ls LimitSettings) Limits(refused func(class string, by ratelimit.By)) (Limits, error) {
	return ls.LimitSharing.Limits(refused,
		Budget{Env: "PACER_RATE_PARTICIPATE_USER", Value: ls.ParticipateUser, Class: "participate", By: ratelimit.ByUser},
		Budget{Env: "PACER_RATE_POLL_USER", Value: ls.PollUser, Class: "poll", By: ratelimit.ByUser},
		Budget{Env: "PACER_RATE_PARTICIPATE_ADDRESS", Value: ls.ParticipateAddress, Class: "participate", By: ratelimit.ByAddress},
		Budget{Env: "PACER_RATE_POLL_ADDRESS", Value: ls.PollAddress, Class: "poll", By: ratelimit.ByAddress})
}

// Budget is one budget setting: Value (as ratelimit.ParseRule reads it)
// of the environment variable Env, limiting Class by By.
type Budget struct {
	Env, Value, Class string
	By                ratelimit.By
}
