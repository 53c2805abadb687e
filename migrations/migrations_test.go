package migrations_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/pacerhq/pacer/migrations"
	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) { standin.RunTests(m, standin.Config{Postgres: true}) }

func TestApplyOnEmptyDatabaseAndRerun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := pgtest.NewDatabase(t)
	latest, err := migrations.Latest()
	if err != nil || latest < 2 {
		t.Fatalf("latest = %d, %v", latest, err)
	}
	for i := range 2 { // re-runnable
		if err := migrations.Apply(ctx, url); err != nil {
			t.Fatalf("apply #%d: %v", i+1, err)
		}
		v, err := migrations.Version(ctx, url)
		if err != nil || v != latest {
			t.Fatalf("after apply #%d: version %d (%v), want %d", i+1, v, err, latest)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, table := range []string{"organizers", "events", "photographers", "event_photographers", "event_runners", "hidden_bibs", "photographer_syncs", "timing_points", "photographer_positions", "photographer_clocks", "runner_splits"} {
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok); err != nil || !ok {
			t.Errorf("table %s missing (%v)", table, err)
		}
	}
	// The schema refuses what the API refuses: ids with '#', and
	// assignments across organizers.
	mustFail := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err == nil {
			t.Errorf("accepted: %s %v", sql, args)
		}
	}
	must := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustFail(`INSERT INTO organizers (organizer_id, name) VALUES ('a#b', 'x')`)
	must(`INSERT INTO organizers (organizer_id, name) VALUES ('o1', 'One'), ('o2', 'Two')`)
	must(`INSERT INTO events (event_id, organizer_id, name) VALUES ('e1', 'o1', 'E1')`)
	must(`INSERT INTO photographers (photographer_id, organizer_id, handle, display_name) VALUES ('p2', 'o2', 'h', 'H')`)
	mustFail(`INSERT INTO event_photographers (organizer_id, event_id, photographer_id) VALUES ('o1', 'e1', 'p2')`)
	mustFail(`INSERT INTO event_photographers (organizer_id, event_id, photographer_id) VALUES ('o2', 'e1', 'p2')`)
	mustFail(`INSERT INTO event_runners (event_id, bib, name) VALUES ('e1', '12 34', 'x')`)
}

func TestConcurrentApply(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() { errs <- migrations.Apply(ctx, url) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The schema's text CHECKs count characters (code points), as the API
// does: that holds in a UTF8 database, and Apply refuses any other.
func TestTextChecksCountCharacters(t *testing.T) {
	t.Parallel()
	ctx, conn := migratedConn(t)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{strings.Repeat("가", 200), true},
		{strings.Repeat("👍", 200), true},
		{strings.Repeat("e\u0301", 100), true},
		{strings.Repeat("가", 201), false},
		{strings.Repeat("e\u0301", 100) + "e", false},
	} {
		_, err := conn.Exec(ctx, `INSERT INTO organizers (organizer_id, name) VALUES ($1, $2)`, fmt.Sprintf("o%d", len(c.name)), c.name)
		if (err == nil) != c.ok {
			t.Errorf("%d code points: %v", utf8.RuneCountInString(c.name), err)
		}
	}

	// A SQL_ASCII database (where length() counts bytes) is refused.
	if err := applyOnNewDatabase(ctx, t, "sql_ascii", "ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C'"); err == nil || !strings.Contains(err.Error(), "UTF8") {
		t.Fatalf("apply on a SQL_ASCII database: %v, want a refusal naming UTF8", err)
	}
}

// migratedConn returns a connection, and a context of a minute, to a new
// database with the migrations applied; both end with t.
func migratedConn(t *testing.T) (context.Context, *pgx.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	url := pgtest.NewDatabase(t)
	if err := migrations.Apply(ctx, url); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return ctx, conn
}

// applyOnNewDatabase creates a database with the given encoding and locale
// (dropped when t ends) and applies the migrations to it.
func applyOnNewDatabase(ctx context.Context, t *testing.T, slug, locale string) error {
	t.Helper()
	cfg, err := pgx.ParseConfig(standin.DatabaseURLFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	name := "pacer_test_" + slug + "_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() {
		defer admin.Close(context.Background())
		if _, err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0 "+locale); err != nil {
		t.Fatal(err)
	}
	cfg.Database = name
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	return migrations.ApplyDB(ctx, db)
}

// pg_trgm splits text into words by the database's LC_CTYPE: under C it
// sees no letter in Hangul, and the name search would find no Hangul
// name. The test databases (pgtest.Locale) see them; a C ctype database
// is refused by 00005 with a message saying what to do.
func TestRunnerNamesNeedAUTF8Ctype(t *testing.T) {
	t.Parallel()
	ctx, conn := migratedConn(t)
	var ctype string
	var n int
	if err := conn.QueryRow(ctx, "SELECT current_setting('lc_ctype'), coalesce(array_length(show_trgm(lower(normalize('김민수', NFD))), 1), 0)").Scan(&ctype, &n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("LC_CTYPE %s: pg_trgm sees no trigram in 김민수", ctype)
	}
	t.Logf("test database LC_CTYPE %s: 김민수 has %d trigrams", ctype, n)

	if err := applyOnNewDatabase(ctx, t, "c_ctype", "ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"); err == nil || !strings.Contains(err.Error(), "LC_CTYPE C") || !strings.Contains(err.Error(), "C.UTF-8") {
		t.Fatalf("apply on a C ctype database: %v, want a refusal naming LC_CTYPE C and a UTF-8 ctype", err)
	}
}
