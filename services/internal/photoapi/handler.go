package photoapi

import (
	"context"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// handler adapts fn, a route's work, to a Huma handler that maps every
// error fn returns through problem, so that no route can answer a domain
// error unmapped. Errors that already are HTTP errors (huma.StatusError)
// pass unchanged. When fn fails its output is dropped, so fn may return
// its output and the domain call's error together.
func handler[I, O any](h *handlers, fn func(ctx context.Context, in *I) (*O, error)) func(context.Context, *I) (*O, error) {
	return func(ctx context.Context, in *I) (*O, error) {
		out, err := fn(ctx, in)
		if err != nil {
			return nil, problem(h.log, err)
		}
		return out, nil
	}
}

// orgHandler adapts fn to the Huma handler of an organizer-scoped route:
// it resolves the caller's organizer (401 or 403 when there is none), calls
// fn with it and maps fn's errors like handler.
func orgHandler[I, O any](h *handlers, fn func(ctx context.Context, org string, in *I) (*O, error)) func(context.Context, *I) (*O, error) {
	return handler(h, func(ctx context.Context, in *I) (*O, error) {
		org, err := organizer(ctx)
		if err != nil {
			return nil, err
		}
		return fn(ctx, org, in)
	})
}

// adminHandler adapts fn to the Huma handler of an admin route: it
// requires the admin role (401 or 403 without it), then calls fn and maps
// its errors like handler.
func adminHandler[I, O any](h *handlers, fn func(ctx context.Context, in *I) (*O, error)) func(context.Context, *I) (*O, error) {
	return handler(h, func(ctx context.Context, in *I) (*O, error) {
		if _, err := server.RequireRole(ctx, auth.RoleAdmin); err != nil {
			return nil, err
		}
		return fn(ctx, in)
	})
}
