package photoapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/smuggletest"
)

// The API as Run serves it answers every over-limit body once (the photo
// batch's 2 MiB, the runner import's 4 MiB) and runs no request hidden in
// it (see package smuggletest).
func TestOverLimitBodiesSmuggleNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stage := fmt.Sprintf("smuggle%d", time.Now().UnixNano()%1e9)
	base, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dc := awsclient.DynamoDB(base)
	t.Cleanup(func() {
		_, _ = dc.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(dynamostore.TableName(stage))})
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- Run(runCtx, Config{Listener: l, Stage: stage, DatabaseURL: pgtest.NewDatabase(t), AWS: &base, Dev: true, Setup: true,
			Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Ready: func(context.Context, string, Deps) error { close(ready); return nil }})
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("photo-api: %v", err)
		}
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("photo-api did not start: %v", err)
	}
	api := NewAPI(http.NewServeMux(), Deps{}, nil, false)
	smuggletest.CheckAPI(t, api, smuggletest.Target{
		Addr: l.Addr().String(),
		Header: map[string]string{server.DevUserHeader: "prober", server.DevRolesHeader: auth.RoleOrganizer, server.DevOrgHeader: "org1",
			"Content-Type": "application/json"},
	})
}
