// Package migrations holds Pacer's versioned Postgres schema as embedded SQL
// files and applies them with goose (github.com/pressly/goose/v3).
//
// Files are named NNNNN_description.sql, each with "-- +goose Up" and
// "-- +goose Down" sections, and are never edited once committed: a change
// is a new file. Services call Apply on start, tests on each fresh database.
// Apply takes a Postgres session advisory lock, so several instances
// starting at once apply each migration exactly once.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed *.sql
var files embed.FS

// FS returns the embedded migration files.
func FS() fs.FS { return files }

// Apply brings the database at databaseURL up to the latest version. It is
// safe to call on every start: already applied migrations are skipped.
func Apply(ctx context.Context, databaseURL string) error {
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return fmt.Errorf("migrations: open: %w", err)
	}
	defer db.Close()
	return ApplyDB(ctx, db)
}

// ApplyDB is Apply over an open *sql.DB (driver "pgx").
func ApplyDB(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrations: locker: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, files, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrations: up: %w", err)
	}
	return nil
}

// Version returns the database's current schema version (0 when none).
func Version(ctx context.Context, databaseURL string) (int64, error) {
	db, err := sql.Open("pgx", databaseURL)
	if err != nil {
		return 0, fmt.Errorf("migrations: open: %w", err)
	}
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, files)
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	return p.GetDBVersion(ctx)
}

// Latest returns the version of the newest embedded migration.
func Latest() (int64, error) {
	ms, err := fs.Glob(files, "*.sql")
	if err != nil {
		return 0, err
	}
	var v int64
	for _, m := range ms {
		var n int64
		if _, err := fmt.Sscanf(m, "%05d_", &n); err == nil && n > v {
			v = n
		}
	}
	return v, nil
}
