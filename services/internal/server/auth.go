package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/auth"
)

// Dev-mode impersonation headers. They are honoured only when the
// middleware is installed with dev=true, and the spec says so.
const (
	DevUserHeader  = "X-Pacer-Dev-User"
	DevRolesHeader = "X-Pacer-Dev-Roles" // comma-separated
	DevOrgHeader   = "X-Pacer-Dev-Org"
)

type principalKey struct{}

// WithPrincipal returns ctx carrying p (for tests of handlers).
func WithPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the authenticated caller, if any.
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// Authenticate installs middleware that, for every operation that needs a
// token (NeedsToken), requires a valid bearer JWT and puts its Principal in the
// request context. Missing or invalid tokens get 401 problem+json, as do
// tokens whose sub cannot be a user id (auth.ValidSubject). In dev mode,
// DevUserHeader may stand in for a token (under the same rule).
func Authenticate(api huma.API, v *auth.Verifier, dev bool) {
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if op == nil || !NeedsToken(op) {
			next(ctx)
			return
		}
		if dev {
			if user := ctx.Header(DevUserHeader); user != "" {
				if !auth.ValidSubject(user) { // the rule a token's sub follows
					_ = huma.WriteErr(api, ctx, http.StatusUnauthorized, "invalid "+DevUserHeader+": 1 to 255 bytes of UTF-8 without control characters") // the client went away; nothing to do
					return
				}
				p := auth.Principal{UserID: user, OrgID: ctx.Header(DevOrgHeader)}
				if roles := ctx.Header(DevRolesHeader); roles != "" {
					p.Roles = strings.Split(roles, ",")
				}
				next(huma.WithValue(ctx, principalKey{}, p))
				return
			}
		}
		// The auth scheme name is case-insensitive (RFC 9110 §11.1).
		scheme, token, _ := strings.Cut(strings.TrimSpace(ctx.Header("Authorization")), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			ctx.SetHeader("WWW-Authenticate", `Bearer realm="pacer"`)
			_ = huma.WriteErr(api, ctx, http.StatusUnauthorized, "missing bearer token in the Authorization header") // the client went away; nothing to do
			return
		}
		p, err := v.Verify(token)
		if err != nil {
			ctx.SetHeader("WWW-Authenticate", `Bearer realm="pacer", error="invalid_token"`)
			_ = huma.WriteErr(api, ctx, http.StatusUnauthorized, "invalid bearer token: signature, expiry or claims did not verify") // the client went away; nothing to do
			return
		}
		next(huma.WithValue(ctx, principalKey{}, p))
	})
}

// Caller returns the authenticated caller or a 401 error. Handlers of
// secured operations call it first.
func Caller(ctx context.Context) (auth.Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return auth.Principal{}, huma.Error401Unauthorized("authentication required")
	}
	return p, nil
}

// RequireRole returns the caller if they have role, else 401/403.
func RequireRole(ctx context.Context, role string) (auth.Principal, error) {
	p, err := Caller(ctx)
	if err != nil {
		return p, err
	}
	if !p.Has(role) {
		return p, huma.Error403Forbidden("this operation needs the " + role + " role")
	}
	return p, nil
}
