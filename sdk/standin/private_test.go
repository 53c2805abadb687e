package standin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/sdk/standin"
)

// A private cluster starts, answers and goes away in a temp folder whose
// path holds a space (its readiness check dials the cluster's unix socket
// there, and a space once turned into '+' on the way).
func TestPrivatePostgresInAFolderWithASpace(t *testing.T) {
	// Under the system temp folder, not t.TempDir: the cluster may run as
	// the postgres user, who cannot enter t.TempDir's private parent.
	tmp, err := os.MkdirTemp("", "pacer test space *")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	stack, err := standin.Start(ctx, standin.Config{Postgres: true, PrivatePostgres: true})
	if err != nil {
		t.Fatalf("private Postgres under %q: %v", tmp, err)
	}
	conn, err := pgx.Connect(ctx, stack.DatabaseURL)
	if err != nil {
		_ = stack.Close()
		t.Fatal(err)
	}
	var one int
	err = conn.QueryRow(ctx, "select 1").Scan(&one)
	_ = conn.Close(ctx)
	if err != nil || one != 1 {
		_ = stack.Close()
		t.Fatalf("select 1: %d %v", one, err)
	}
	if err := stack.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "pacer-pg-*")); len(left) != 0 {
		t.Fatalf("the cluster's folder is left behind: %v", left)
	}
}
