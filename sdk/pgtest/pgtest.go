// Package pgtest gives a test its own fresh Postgres database, so tests that
// touch Postgres can run in parallel without seeing each other's rows.
//
// The server is the one named by $DATABASE_URL (see
// standin.DatabaseURLFromEnv). Start it once per test package from TestMain:
//
//	func TestMain(m *testing.M) {
//		standin.RunTests(m, standin.Config{Postgres: true})
//	}
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		url := pgtest.NewDatabase(t)
//		conn, err := pgx.Connect(ctx, url)
//		...
//	}
//
// A test that cannot reach Postgres fails with a message saying how to start
// it; it is never skipped.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pacerhq/pacer/sdk/standin"
)

// Locale is the encoding and locale of the databases NewDatabase creates:
// UTF-8 with a UTF-8 character classification, under which pg_trgm sees
// Hangul as letters (under LC_CTYPE C it sees none, and migration 00005
// refuses the database).
const Locale = "ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'"

// NewDatabase creates a new, uniquely named, empty database on the server
// from $DATABASE_URL and returns a URL for it. The database is dropped (WITH
// (FORCE), so open connections do not stop it) when the test and its
// subtests finish.
func NewDatabase(t testing.TB) string {
	t.Helper()
	base := standin.DatabaseURLFromEnv()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: cannot reach Postgres at %s: %v\n"+
			"  Run the tests with `make test`, or start a server and point DATABASE_URL at it:\n"+
			"  - call standin.RunTests(m, standin.Config{Postgres: true}) from TestMain: it finds or starts one;\n"+
			"  - or start the system server (Debian: pg_ctlcluster <version> main start) on 127.0.0.1:5432;\n"+
			"  - or export DATABASE_URL=postgres://user@host:port/db for a role allowed to CREATE DATABASE.",
			redact(base), err)
	}
	defer conn.Close(context.Background())

	name := databaseName(t.Name())
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE template0 " + Locale
	for attempt := 0; ; attempt++ {
		_, err = conn.Exec(ctx, create)
		// 55006 object_in_use: another session is briefly connected to the
		// template. Try again.
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || attempt == 20 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("pgtest: create database %s on %s: %v", name, redact(base), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})

	u, err := withDatabase(base, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// databaseName makes a Postgres identifier (at most 63 bytes) from a test
// name and a random suffix: lowercase letters, digits and underscores.
func databaseName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	slug := b.String()
	const prefix, maxSlug = "pacer_test_", 63 - len("pacer_test_") - 1 - 12
	if len(slug) > maxSlug {
		slug = slug[:maxSlug]
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	return prefix + slug + "_" + hex.EncodeToString(rnd[:])
}

// withDatabase returns base pointing at database name. base is a URL
// (postgres://...) or a keyword/value string (host=... user=...).
func withDatabase(base, name string) (string, error) {
	if !strings.Contains(base, "://") {
		// In keyword/value strings the last setting wins.
		return base + " dbname=" + name, nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// redact hides a password in a URL, for messages.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}
