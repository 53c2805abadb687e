package migrations_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
	for _, table := range []string{"organizers", "events", "photographers", "event_photographers", "event_runners", "hidden_bibs", "photographer_syncs"} {
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
