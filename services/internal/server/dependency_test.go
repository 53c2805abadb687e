package server_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pacerhq/pacer/services/internal/server"
)

func TestDependencyFailed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10e9)
	defer cancel()
	// A real AWS client call to a port nothing listens on.
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: aws.AnonymousCredentials{}, RetryMaxAttempts: 1})
	_, awsErr := db.ListTables(ctx, &dynamodb.ListTablesInput{})
	// A real pgx connection to a port nothing listens on.
	_, pgErr := pgx.Connect(ctx, "postgres://x@127.0.0.1:1/x?connect_timeout=2")
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"aws call", fmt.Errorf("store: %w", awsErr), true},
		{"postgres connect", fmt.Errorf("pgstore: %w", pgErr), true},
		{"postgres shutting down", &pgconn.PgError{Code: "57P01"}, true},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"a bug", errors.New("nil map"), false},
	} {
		if c.err == nil {
			t.Fatalf("%s: no error produced", c.name)
		}
		if got := server.DependencyFailed(c.err); got != c.want {
			t.Errorf("%s (%v): %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
