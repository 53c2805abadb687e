package standin

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultDatabaseURL is tried when DATABASE_URL is unset.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// startPostgres returns a Postgres URL with rights to create databases:
// $DATABASE_URL if set, else the server on 127.0.0.1:5432 if it answers,
// else a private throwaway cluster (initdb + postgres) in a temp dir.
// The process is nil unless a private cluster was started.
func startPostgres(ctx context.Context, cfg Config) (*process, string, error) {
	if cfg.PrivatePostgres {
		return startPrivatePostgres(ctx, cfg)
	}
	if url := os.Getenv("DATABASE_URL"); url != "" {
		if err := pingPostgres(ctx, url); err != nil {
			return nil, "", fmt.Errorf("standin: DATABASE_URL is set but Postgres does not answer: %w", err)
		}
		return nil, url, nil
	}
	if pingPostgres(ctx, DefaultDatabaseURL) == nil {
		return nil, DefaultDatabaseURL, nil
	}
	return startPrivatePostgres(ctx, cfg)
}

func pingPostgres(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// pgBinDir finds the newest /usr/lib/postgresql/*/bin holding initdb.
func pgBinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if fileExists(filepath.Join(dirs[i], "initdb")) {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("%w: no Postgres answers on 127.0.0.1:5432, DATABASE_URL is unset, and initdb was not found (Debian: apt-get install postgresql)", ErrNotInstalled)
}

func startPrivatePostgres(ctx context.Context, cfg Config) (*process, string, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, "", err
	}
	sweepStaleClusters()
	dir, err := os.MkdirTemp("", "pacer-pg-")
	if err != nil {
		return nil, "", err
	}
	cleanup := func() { os.RemoveAll(dir) }
	// Postgres refuses to run as root: run it as the postgres user then.
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			cleanup()
			return nil, "", fmt.Errorf("standin: running as root and there is no postgres user to run a private cluster: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			cleanup()
			return nil, "", err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		cleanup()
		return nil, "", fmt.Errorf("standin: initdb: %v\n%s", err, out)
	}
	p, port, err := startOnFreePort(ctx, "Postgres", cfg.StartTimeout, func(port int) (*process, error) {
		cmd := exec.CommandContext(context.WithoutCancel(ctx), filepath.Join(bin, "postgres"),
			"-D", data, "-p", strconv.Itoa(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
			"-c", "fsync=off", "-c", "max_connections=200")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return startProcess("Postgres", cmd, cfg.Log)
	}, func(ctx context.Context, port int) error {
		// Through the cluster's own unix socket in its private folder: only
		// this server can answer there, even where /proc cannot tell who
		// holds the TCP port. Postgres exits if it cannot bind that port.
		q := url.Values{"host": {dir}, "port": {strconv.Itoa(port)}, "sslmode": {"disable"}}
		// Encode writes a space as '+', which pgx keeps as '+'.
		return pingPostgres(ctx, "postgres://postgres@/postgres?"+strings.ReplaceAll(q.Encode(), "+", "%20"))
	})
	if err != nil {
		cleanup()
		return nil, "", err
	}
	p.cleanup = cleanup
	dbURL := fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", hostPort(port))
	return p, dbURL, nil
}

// sweepStaleClusters removes the folders of private clusters whose server
// is gone: a parent that was killed (SIGKILL) cannot remove its own. Folders
// younger than a minute are left alone, as their initdb may still be running.
func sweepStaleClusters() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "pacer-pg-*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < time.Minute {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && pid > 0 && syscall.Kill(pid, 0) == nil {
				continue // still running
			}
		}
		_ = os.RemoveAll(d)
	}
}

// DatabaseURLFromEnv returns $DATABASE_URL, or DefaultDatabaseURL.
func DatabaseURLFromEnv() string {
	if url := os.Getenv("DATABASE_URL"); url != "" {
		return url
	}
	return DefaultDatabaseURL
}
