package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/server"
)

// asyncevent-api and the asyncevent-worker processes, scaled on queue
// depth (workers.go). Both ensure the table
// (PACER_ASYNCEVENT_TABLE, default AsyncEventTable) and the queue with its
// DLQ (PACER_ASYNCEVENT_QUEUE, default asyncevent-participations) exist.
// The API runs in dev mode and prints a user and an admin token (24 h,
// signed with the dev secret) with requests to try.
func init() {
	services = append(services,
		Service{
			Name:    "asyncevent-api",
			Addr:    envOr("PACER_ASYNCEVENT_ADDR", asynceventapi.DefaultAddr),
			AddrVar: "PACER_ASYNCEVENT_ADDR",
			Run: func(ctx context.Context, env Env) error {
				var cfg asynceventapi.Config
				if err := config.FromEnv("asyncevent-api", cfg.Declare); err != nil {
					return err
				}
				cfg.Listener, cfg.Setup, cfg.Dev, cfg.AWS, cfg.Log = env.Listener, true, true, &env.AWS, env.Log
				devLimits(&cfg.Limits.LimitSharing, os.Getenv)
				env.advertise("asyncevent.table", cfg.Table)
				env.advertise("asyncevent.ratePollUser", cfg.Limits.PollUser)
				env.advertise("asyncevent.rateReplicas", strconv.Itoa(cfg.Limits.Replicas))
				cfg.Ready = func(_ context.Context, base string, _ asynceventapi.Deps) error {
					fmt.Fprint(os.Stdout, asynceventBanner(base))
					env.Ready()
					return nil
				}
				return asynceventapi.Run(ctx, cfg)
			},
		},
		Service{
			Name:    "asyncevent-workers",
			Addr:    envOr("PACER_DEV_AUTOSCALER_ADDR", "127.0.0.1:0"),
			AddrVar: "PACER_DEV_AUTOSCALER_ADDR",
			Run:     runWorkers,
		},
		Service{
			Name: "asyncevent-events",
			Run: func(ctx context.Context, env Env) error {
				var cfg asynceventevents.Config
				if err := config.FromEnv("asyncevent-events", cfg.Declare); err != nil {
					return err
				}
				cfg.Setup, cfg.AWS, cfg.Log, cfg.Ready = true, &env.AWS, env.Log, env.Ready
				if os.Getenv("PACER_EVENTS_SINK") == "" {
					cfg.SinkKind = asynceventevents.SinkFile
				}
				if os.Getenv("PACER_EVENTS_BUFFER_INTERVAL") == "" {
					cfg.BufferInterval = 10 * time.Second
				}
				l, err := opsListener("PACER_EVENTS_OPS_ADDR", cfg.OpsAddr)
				if err != nil {
					return err
				}
				cfg.OpsListener = l
				cfg.Ready = func() {
					fmt.Fprintf(os.Stdout, "asyncevent-events ops: http://%s/metrics (and /healthz, /readyz)\n", l.Addr())
					env.Ready()
				}
				return asynceventevents.Run(ctx, cfg)
			},
		},
	)
}

// asynceventBanner prints dev tokens and requests to try.
func asynceventBanner(base string) string {
	secret := envOr("PACER_JWT_SECRET", server.DevJWTSecret)
	user, err1 := auth.Mint([]byte(secret), auth.Principal{UserID: "dev-user"}, 24*time.Hour)
	admin, err2 := auth.Mint([]byte(secret), auth.Principal{UserID: "dev-admin", Roles: []string{auth.RoleAdmin}}, 24*time.Hour)
	if err1 != nil || err2 != nil {
		return fmt.Sprintf("asyncevent-api: cannot mint dev tokens: %v %v\n", err1, err2)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nasyncevent-api: dev tokens (24 h):\n  export PACER_USER_TOKEN=%s\n  export PACER_ADMIN_TOKEN=%s\n", user, admin)
	fmt.Fprintf(&b, "Try:\n")
	fmt.Fprintf(&b, "  curl -s %s/admin/events -H \"Authorization: Bearer $PACER_ADMIN_TOKEN\" -H 'Content-Type: application/json' -d '{\"eventId\":\"demo\",\"eventType\":\"FIRST_COME\",\"capacityTotal\":100}'\n", base)
	fmt.Fprintf(&b, "  curl -s -X POST %s/events/demo/participations -H \"Authorization: Bearer $PACER_USER_TOKEN\"\n", base)
	fmt.Fprintf(&b, "  curl -s %s/requests/<requestId> -H \"Authorization: Bearer $PACER_USER_TOKEN\"\n", base)
	fmt.Fprintf(&b, "  curl -s %s/me/participations -H 'X-Pacer-Dev-User: dev-user'   # dev-mode impersonation\n", base)
	fmt.Fprintf(&b, "  curl -s %s/admin/events/demo/stats -H \"Authorization: Bearer $PACER_ADMIN_TOKEN\"\n", base)
	fmt.Fprintf(&b, "  API reference: %s/docs\n", base)
	fmt.Fprintf(&b, "Pages: participate %s/ui/?event=demo · ops (admin) %s/ui/ops.html?event=demo · DLQ %s/ui/dlq.html\n\n", base, base, base)
	return b.String()
}
