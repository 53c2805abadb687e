package asynceventapi_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
)

// deps are the API's Deps over env's roles, as the API process builds
// them (asynceventbackend.OpenAPI).
func deps(env *asynceventtest.Env) asynceventapi.Deps {
	return asynceventapi.Deps{Ingest: env.Ingest, Query: env.Query, Admin: env.Admin, Operations: env.Operations}
}

func asyncevent_firstCome(id string) asyncevent.NewEvent {
	return asyncevent.NewEvent{EventID: id, EventType: asyncevent.FirstCome, Capacity: 10, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}
}

// run serves the API as Run serves it, with cfg's settings, over env's
// table, queue and clients, on loopback until t ends, and returns its
// address (host:port).
func run(t *testing.T, env *asynceventtest.Env, cfg asynceventapi.Config) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Table, cfg.Queue, cfg.DynamoDB, cfg.SQS = env.DDB.Table.Name(), env.QueueName, env.Dynamo, env.SQS
	cfg.Listener = l
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- asynceventapi.Run(ctx, cfg) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("api: %v", err)
		}
	})
	return l.Addr().String()
}
