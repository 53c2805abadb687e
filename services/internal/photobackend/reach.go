package photobackend

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultStartTimeout is how long OpenAPI waits for its first connection
// to Postgres (Config.StartTimeout): enough for a paused serverless
// database to resume, short enough that a task the database does not
// admit fails with a reason instead of hanging on a dropped connection
// for the kernel's two minutes.
const DefaultStartTimeout = 30 * time.Second

// reach connects to url once within timeout and, when it cannot, says
// which host it tried and what to check. The error never holds the
// password: pgx's errors name the host, user and database only.
func reach(ctx context.Context, url string, timeout time.Duration) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("postgres: DATABASE_URL: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres: cannot reach %s:%d within %s: %w (the database must admit this task's network: "+
			"the stack's DatabaseSecurityGroupId, or the private subnets' addresses; docs/deploy.md)", cfg.Host, cfg.Port, timeout, err)
	}
	return conn.Close(ctx)
}
