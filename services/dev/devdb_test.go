package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/sdk/standin"
)

// sharedPostgres returns a Postgres server for runners that must share one
// (as two `make run`s on this machine share 127.0.0.1:5432), and keeps
// DATABASE_URL unset for them so that they make their own dev databases.
func sharedPostgres(t *testing.T) string {
	t.Helper()
	pg, err := standin.Start(context.Background(), standin.Config{Postgres: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	t.Setenv("DATABASE_URL", "")
	return pg.DatabaseURL
}

// runInBackground starts run(cfg) with one service, svc, and waits until
// it is ready; stop cancels it and returns run's error.
func runInBackground(t *testing.T, cfg Config, svc func(ctx context.Context, env Env) error) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	errc := make(chan error, 1)
	cfg.Addr = "127.0.0.1:0"
	cfg.OnReady = func(string) { close(ready) }
	cfg.Services = []Service{{Name: "svc", Run: svc}}
	go func() { errc <- run(ctx, cfg) }()
	select {
	case <-ready:
	case err := <-errc:
		cancel()
		t.Fatalf("run: %v", err)
	case <-time.After(90 * time.Second):
		cancel()
		t.Fatal("runner not ready after 90s")
	}
	return func() error {
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(40 * time.Second):
			return errors.New("runner did not stop within 40s")
		}
	}
}

// A second stack on a dev database that a running stack owns is refused
// with a message naming -db, before it touches anything: the first stack's
// data and connections survive. Once the first stops, the name is free.
func TestSecondStackOnTheSameDatabaseIsRefused(t *testing.T) {
	admin := sharedPostgres(t)
	name := uniqueDB()
	ctx := context.Background()

	// The first stack's service keeps a connection and a row.
	conns := make(chan *pgx.Conn, 1)
	stopFirst := runInBackground(t, Config{PostgresURL: admin, Database: name}, func(ctx context.Context, env Env) error {
		conn, err := pgx.Connect(ctx, env.DatabaseURL)
		if err != nil {
			return err
		}
		if _, err := conn.Exec(ctx, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('first')"); err != nil {
			return err
		}
		conns <- conn
		env.Ready()
		<-ctx.Done()
		return nil
	})
	conn := <-conns
	defer conn.Close(ctx)

	// The first runner exported its DATABASE_URL into this process; a second
	// `make run` is another process and does not see it.
	t.Setenv("DATABASE_URL", "")
	began := time.Now()
	err := run(ctx, Config{Addr: "127.0.0.1:0", PostgresURL: admin, Database: name,
		Services: []Service{{Name: "svc", Run: func(context.Context, Env) error { return errors.New("second stack started its services") }}}})
	if !errors.Is(err, ErrDatabaseInUse) {
		t.Fatalf("second stack on %s: %v, want ErrDatabaseInUse", name, err)
	}
	for _, want := range []string{fmt.Sprintf("%q", name), "another running stack", "-db or PACER_DEV_DB", fmt.Sprintf("pacer-dev pid=%d", os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q lacks %q", err, want)
		}
	}
	t.Logf("refused in %s: %v", time.Since(began).Round(time.Millisecond), err)
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("refusing took %s", took)
	}
	var v string
	if err := conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v); err != nil || v != "first" {
		t.Fatalf("first stack's connection and data after the refusal: %q, %v", v, err)
	}
	if err := stopFirst(); err != nil {
		t.Fatalf("first stack: %v", err)
	}

	// The name is free again, and the next stack starts on an empty database.
	stopThird := runInBackground(t, Config{PostgresURL: admin, Database: name}, func(ctx context.Context, env Env) error {
		c, err := pgx.Connect(ctx, env.DatabaseURL)
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		var exists bool
		if err := c.QueryRow(ctx, "SELECT to_regclass('kept') IS NOT NULL").Scan(&exists); err != nil || exists {
			return fmt.Errorf("the database is not fresh: table kept exists=%v (%v)", exists, err)
		}
		env.Ready()
		<-ctx.Done()
		return nil
	})
	if err := stopThird(); err != nil {
		t.Fatalf("third stack: %v", err)
	}
	var left bool
	if err := pgxQueryRow(t, admin, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&left); err != nil || left {
		t.Errorf("database %s still exists after its stack stopped (%v)", name, err)
	}
}

// pgxQueryRow runs one query on its own connection to url.
func pgxQueryRow(t *testing.T, url, sql string, args ...any) pgx.Row {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c.QueryRow(context.Background(), sql, args...)
}

// claimHelper, in a subprocess (PACER_DEV_TEST_CLAIM="<admin URL> <name>"),
// claims a dev database, says "claimed" and waits to be killed.
func claimHelper(spec string) {
	admin, name, _ := strings.Cut(spec, " ")
	if _, err := claimDatabase(context.Background(), admin, name, holderName("helper")); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("claimed")
	select {}
}

// A stack that is killed (SIGKILL: no clean-up runs) releases its dev
// database: the lock is a session lock, and Postgres ends the session when
// the dead process's connection closes.
func TestKilledStackReleasesItsDatabase(t *testing.T) {
	admin := sharedPostgres(t)
	name := uniqueDB()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "PACER_DEV_TEST_CLAIM="+admin+" "+name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	said := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		said <- sc.Text()
	}()
	select {
	case l := <-said:
		if l != "claimed" {
			t.Fatalf("helper: %s", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("helper did not claim within 30s")
	}
	ctx := context.Background()
	if _, err := claimDatabase(ctx, admin, name, "test"); !errors.Is(err, ErrDatabaseInUse) ||
		!strings.Contains(err.Error(), fmt.Sprintf("pid=%d", cmd.Process.Pid)) {
		t.Fatalf("claim while the helper (pid %d) holds it: %v, want ErrDatabaseInUse naming it", cmd.Process.Pid, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	var db *devDatabase
	asyncWait(t, 10*time.Second, func() bool {
		db, err = claimDatabase(ctx, admin, name, "test")
		return err == nil
	})
	if err := db.release(); err != nil {
		t.Fatal(err)
	}
}

// Postgres truncates names beyond 63 bytes, so two of them would share a
// database but not a lock: they are refused, naming the setting.
func TestDatabaseNameTooLong(t *testing.T) {
	_, err := claimDatabase(context.Background(), "postgres://127.0.0.1:1/postgres", strings.Repeat("d", 64), "test")
	if err == nil || !strings.Contains(err.Error(), "-db or PACER_DEV_DB") {
		t.Fatalf("claim of a 64-byte name: %v", err)
	}
}
