package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbSetting names the settings that choose the dev database, for messages.
const dbSetting = "-db or PACER_DEV_DB"

// lockSpace is the first key of the advisory locks that mark dev databases
// as owned ("PACE"); the second is hashtext(name).
const lockSpace = 0x50414345

// maxDatabaseName is Postgres's identifier limit in bytes; it truncates
// longer names, so two such names would share a database but not a lock.
const maxDatabaseName = 63

// devLocale is the dev database's encoding and locale: UTF-8, with a
// UTF-8 character classification under which pg_trgm sees Hangul as
// letters (migration 00005 refuses a database where it does not).
const devLocale = "ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'"

// ErrDatabaseInUse reports that another live stack owns the dev database.
var ErrDatabaseInUse = errors.New("dev database in use")

// devDatabase is a dev database owned by this stack: while it holds a
// session advisory lock keyed on the name, on a connection to the server's
// maintenance database, no other stack recreates or drops it. The lock
// dies with the connection, so a stack that is killed releases it too.
type devDatabase struct {
	name     string
	adminURL string
	lock     *pgx.Conn
}

// claimDatabase takes ownership of the dev database name on the server at
// adminURL (a URL with rights to create databases). holder describes this
// stack to the one that is refused (Postgres application_name). It fails
// with ErrDatabaseInUse if another live stack owns name, touching nothing.
func claimDatabase(ctx context.Context, adminURL, name, holder string) (*devDatabase, error) {
	if name == "" || len(name) > maxDatabaseName {
		return nil, fmt.Errorf("dev database name %q must be 1 to %d bytes (%s)", name, maxDatabaseName, dbSetting)
	}
	cfg, err := pgx.ParseConfig(adminURL)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = holder
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, hashtext($2))", lockSpace, name).Scan(&got); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("lock dev database %s: %w", name, err)
	}
	if !got {
		owner := lockOwner(ctx, conn, name)
		conn.Close(context.Background())
		return nil, fmt.Errorf("%w: %q on %s is used by another running stack%s. Stop that stack, or give this one another database with %s (e.g. make run RUNFLAGS=-db=%s_2)",
			ErrDatabaseInUse, name, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), owner, dbSetting, name)
	}
	return &devDatabase{name: name, adminURL: adminURL, lock: conn}, nil
}

// lockOwner describes the session that holds name's lock, e.g.
// " (pacer-dev pid=123 health=127.0.0.1:8080)", or "" if it cannot tell.
func lockOwner(ctx context.Context, conn *pgx.Conn, name string) string {
	var app string
	err := conn.QueryRow(ctx, `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid = $1::int4::oid AND l.objid = hashtext($2)::oid AND l.objsubid = 2`, lockSpace, name).Scan(&app)
	if err != nil || app == "" {
		return ""
	}
	return " (" + app + ")"
}

// holderName is this stack's application_name on the lock connection.
func holderName(healthAddr string) string {
	return fmt.Sprintf("pacer-dev pid=%d health=%s", os.Getpid(), healthAddr)
}

// recreate drops what a stack that died left under the name and creates it
// empty; it returns a URL for it.
func (d *devDatabase) recreate(ctx context.Context) (string, error) {
	id := pgx.Identifier{d.name}.Sanitize()
	if _, err := d.lock.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("drop database %s: %w", d.name, err)
	}
	if _, err := d.lock.Exec(ctx, "CREATE DATABASE "+id+" TEMPLATE template0 "+devLocale); err != nil {
		return "", fmt.Errorf("create database %s: %w", d.name, err)
	}
	return withDatabase(d.adminURL, d.name), nil
}

// release drops the database, then gives up ownership.
func (d *devDatabase) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err error
	if _, derr := d.lock.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{d.name}.Sanitize()+" WITH (FORCE)"); derr != nil {
		err = fmt.Errorf("drop database %s: %w", d.name, derr)
	}
	// Closing the session releases its advisory lock.
	return errors.Join(err, d.lock.Close(ctx))
}

// withDatabase points a postgres:// URL (or keyword/value string) at name.
func withDatabase(base, name string) string {
	if !strings.Contains(base, "://") {
		return base + " dbname=" + name
	}
	i := strings.Index(base, "://") + 3
	rest := base[i:]
	query := ""
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest, query = rest[:q], rest[q:]
	}
	if s := strings.IndexByte(rest, '/'); s >= 0 {
		rest = rest[:s]
	}
	return base[:i] + rest + "/" + name + query
}
