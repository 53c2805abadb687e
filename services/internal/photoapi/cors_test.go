package photoapi

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/corstest"
)

// photo-api as Run serves it answers cross-origin calls from its CORS
// origins: a preflight names its methods (all five) and the headers it
// reads (in dev mode the dev headers too), then the call itself is
// readable from that origin. See server.CORS.
func TestCORSOrigins(t *testing.T) {
	t.Parallel()
	const app = "https://organizer.example.com"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stage, awsCfg := runStage(ctx, t, "cors")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Listener: l, Stage: stage, DatabaseURL: pgtest.NewDatabase(t), AWS: &awsCfg, Dev: true, Setup: true,
		CORSOrigins: server.Origins{app}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	runCtx, stop := context.WithCancel(ctx)
	ready, done := make(chan string, 1), make(chan error, 1)
	cfg.Ready = func(_ context.Context, base string, _ Deps) error { ready <- base; return nil }
	go func() { done <- Run(runCtx, cfg) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("photo-api: %v", err)
		}
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		done <- nil // Run has returned: nothing left for the deferred stop to wait for
		t.Fatalf("photo-api did not start: %v", err)
	case <-ctx.Done():
		t.Fatal("photo-api did not start in time")
	}
	corstest.Check(t, base, corstest.Call{Path: "/events", Origin: app, Status: 200,
		Header:  map[string]string{server.DevUserHeader: "u1", server.DevRolesHeader: "organizer", server.DevOrgHeader: "org1"},
		Methods: "GET, POST, PUT, PATCH, DELETE", Headers: "Authorization, Content-Type, X-Pacer-Dev-User, X-Pacer-Dev-Roles, X-Pacer-Dev-Org"})
}
