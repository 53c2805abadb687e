package server

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

type clientIPKey struct{}

// ClientIP installs middleware that puts each caller's IP address in the
// request context (ClientIPFrom): the one the rate limits see, from the
// connection or, behind a trusted proxy, X-Forwarded-For
// (ratelimit.Proxies.ClientIP), whole (an IPv6 address is not cut to its
// /64). Install it before the operations that read it.
func ClientIP(api huma.API, proxies ratelimit.Proxies) {
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		next(huma.WithValue(ctx, clientIPKey{}, proxies.ClientIP(ctx.RemoteAddr(), ctx.Header("X-Forwarded-For"))))
	})
}

// ClientIPFrom returns the caller's IP address that ClientIP found: ""
// when unknown (no middleware, or nothing parsed).
func ClientIPFrom(ctx context.Context) string {
	ip, _ := ctx.Value(clientIPKey{}).(string)
	return ip
}
