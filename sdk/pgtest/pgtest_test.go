package pgtest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{Postgres: true})
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func currentDatabase(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var name string
	if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	conn := connect(t, standin.DatabaseURLFromEnv())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// Parallel tests each get their own empty database, and it is dropped
// afterwards, even with a connection still open.
func TestNewDatabaseIsolatesAndDrops(t *testing.T) {
	ctx := context.Background()
	names := make([]string, 2)
	t.Run("group", func(t *testing.T) {
		for i := range names {
			t.Run(fmt.Sprint("db", i), func(t *testing.T) {
				t.Parallel()
				url := pgtest.NewDatabase(t)
				conn := connect(t, url)
				names[i] = currentDatabase(t, conn)
				if !strings.HasPrefix(names[i], "pacer_test_") {
					t.Errorf("database name %q lacks the pacer_test_ prefix", names[i])
				}
				var tables int
				if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
					t.Fatal(err)
				}
				if tables != 0 {
					t.Errorf("new database has %d tables, want 0", tables)
				}
				if _, err := conn.Exec(ctx, "CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
					t.Fatal(err)
				}
				// A connection left open must not stop the drop.
				leak, err := pgx.Connect(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				_ = leak
			})
		}
	})
	if names[0] == "" || names[1] == "" || names[0] == names[1] {
		t.Fatalf("want two distinct databases, got %q", names)
	}
	for _, n := range names {
		if databaseExists(t, n) {
			t.Errorf("database %s still exists after its test ended", n)
		}
	}
}

// Long test names still make valid identifiers (at most 63 bytes).
func TestNewDatabaseLongName(t *testing.T) {
	t.Run(strings.Repeat("Very-Long Name/ÄÖ ", 8), func(t *testing.T) {
		conn := connect(t, pgtest.NewDatabase(t))
		if n := currentDatabase(t, conn); len(n) > 63 {
			t.Errorf("name %q is %d bytes", n, len(n))
		}
	})
}

// fatalTB records Fatalf instead of failing the real test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// An unreachable server fails the test (never skips it) and says how to
// start one.
func TestNewDatabaseUnreachableFails(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2")
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		pgtest.NewDatabase(f)
		t.Error("NewDatabase returned without failing")
	}()
	<-done
	for _, want := range []string{"cannot reach Postgres", "make test", "DATABASE_URL"} {
		if !strings.Contains(f.msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, f.msg)
		}
	}
}
