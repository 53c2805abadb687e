package analytics

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver
)

//go:embed ddl/events.sql queries/*.sql
var files embed.FS

// DDL returns the Athena DDL of the events table.
func DDL() string {
	b, _ := files.ReadFile("ddl/events.sql")
	return string(b)
}

// Query is one report: its file name (without .sql), its title (the
// first comment line) and its SQL.
type Query struct {
	Name, Title, SQL string
}

// Queries returns the reports, in file name order.
func Queries() []Query {
	names, _ := fs.Glob(files, "queries/*.sql")
	sort.Strings(names)
	var out []Query
	for _, n := range names {
		b, _ := files.ReadFile(n)
		sqlText := string(b)
		title, _, _ := strings.Cut(strings.TrimPrefix(sqlText, "-- "), "\n")
		title, _, _ = strings.Cut(title, ":")
		title, _, _ = strings.Cut(title, ". ")
		title = strings.TrimSuffix(title, ".")
		out = append(out, Query{Name: strings.TrimSuffix(path.Base(n), ".sql"), Title: title, SQL: sqlText})
	}
	return out
}

// shim makes the Athena (Trino) functions the queries use exist on DuckDB.
var shim = []string{
	"SET TimeZone = 'UTC'",
	// Trino: from_unixtime(seconds) is a UTC timestamp.
	"CREATE MACRO from_unixtime(s) AS make_timestamp(CAST(floor(s * 1000000) AS BIGINT))",
	// Trino's approx_percentile has a small rank error; here it is exact:
	// the smallest value whose rank is at least p·n (quantile_disc).
	"CREATE MACRO approx_percentile(x, p) AS quantile_disc(x, p)",
}

// DB is a DuckDB database with the events view.
type DB struct {
	db *sql.DB
}

// ErrNoEvents: the folder holds no event object yet.
var ErrNoEvents = errors.New("analytics: no events yet")

// Open reads the events under dir (a folder in Firehose's S3 layout:
// dir/events/dt=…/hour=…/<object>) into an in-memory DuckDB database as
// the view "events", with the DDL's columns.
func Open(ctx context.Context, dir string) (*DB, error) {
	glob := filepath.Join(dir, "events", "dt=*", "hour=*", "*")
	if m, _ := filepath.Glob(glob); len(m) == 0 {
		return nil, fmt.Errorf("%w in %s", ErrNoEvents, filepath.Join(dir, "events"))
	}
	cols, err := Columns(DDL())
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection: the macros and the view live in it
	var spec, sel []string
	for _, c := range cols {
		spec = append(spec, fmt.Sprintf("%s: '%s'", quoteString(c.Key), c.Type))
		sel = append(sel, fmt.Sprintf("%q AS %q", c.Key, c.Name))
	}
	view := fmt.Sprintf("CREATE VIEW events AS SELECT %s, dt, hour FROM read_json(%s, format = 'newline_delimited', "+
		"hive_partitioning = true, columns = {%s})", strings.Join(sel, ", "), quoteString(glob), strings.Join(spec, ", "))
	for _, stmt := range append(append([]string(nil), shim...), view) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("analytics: %s: %w", firstLine(stmt), err)
		}
	}
	return &DB{db: db}, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Table is a query's result.
type Table struct {
	Columns []string
	Rows    [][]any
}

// Run runs q.
func (d *DB) Run(ctx context.Context, q Query) (*Table, error) {
	rows, err := d.db.QueryContext(ctx, q.SQL)
	if err != nil {
		return nil, fmt.Errorf("analytics: %s: %w", q.Name, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	t := &Table{Columns: cols}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, vals)
	}
	return t, rows.Err()
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 80 {
		l = l[:80] + "…"
	}
	return l
}
