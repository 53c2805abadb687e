package server

import (
	"context"
	"errors"
	"net"

	"github.com/aws/smithy-go"
	"github.com/jackc/pgx/v5/pgconn"
)

// DependencyFailed reports whether err comes from a dependency that failed
// or did not answer (an AWS call, a network error, a timeout, Postgres
// unreachable or shutting down) rather than from a bug: services answer
// those with 503 so that clients retry, not 500.
func DependencyFailed(err error) bool {
	var op *smithy.OperationError
	var ne net.Error
	var pgc *pgconn.ConnectError
	var pge *pgconn.PgError
	switch {
	case errors.As(err, &op), errors.As(err, &ne), errors.As(err, &pgc), errors.Is(err, context.DeadlineExceeded):
		return true
	case errors.As(err, &pge):
		// Class 08 (connection exception), 53 (insufficient resources),
		// 57P0x (operator intervention: shutdown, cannot connect now).
		c := pge.Code
		return len(c) == 5 && (c[:2] == "08" || c[:2] == "53" || c[:4] == "57P0")
	}
	return false
}
