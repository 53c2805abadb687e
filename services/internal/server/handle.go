package server

import (
	"context"

	"github.com/pacerhq/pacer/sdk/auth"
)

// Handle adapts work, one route's work, to a Huma handler: guard first
// says who calls (or answers 401/403), then work runs with it, and every
// error work returns goes through problem (the service's Errors.Problem),
// so no route can answer a domain error unmapped. When work fails its
// output is dropped, so work may return its output and a domain call's
// error together; when it fails once its operation's deadline has passed
// (Bound), the answer is 503 timeout, whatever the failure.
//
// A guard is a func(ctx) (C, error): Anyone for a public route, Caller for
// any authenticated caller, Admin, or a service's own (photoapi's
// organizer returns the caller's org id).
func Handle[C, I, O any](guard func(context.Context) (C, error), problem func(error) error,
	work func(ctx context.Context, c C, in *I) (*O, error)) func(context.Context, *I) (*O, error) {
	return func(ctx context.Context, in *I) (*O, error) {
		c, err := guard(ctx)
		if err != nil {
			return nil, err
		}
		out, err := work(ctx, c, in)
		if err != nil {
			if pastDeadline(ctx) {
				err = &deadlineError{err}
			}
			return nil, problem(err)
		}
		return out, nil
	}
}

// Anyone is the guard of a public route: it lets every request through.
func Anyone(context.Context) (struct{}, error) { return struct{}{}, nil }

// Admin is the guard of an admin route: the caller, if they have the admin
// role, else 401 or 403.
func Admin(ctx context.Context) (auth.Principal, error) { return RequireRole(ctx, auth.RoleAdmin) }
