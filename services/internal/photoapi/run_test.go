package photoapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/pgtest"
)

// Without Setup, Run refuses a missing table, naming it and the setting
// that creates it, and creates nothing; with Setup it creates the table;
// then, without Setup, it serves on the table that is there, without a
// CreateTable call.
func TestRunSetup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dbURL := pgtest.NewDatabase(t)
	stage, base := runStage(ctx, t, "setup")
	name := dynamostore.TableName(stage)
	dc := awsclient.DynamoDB(base)

	// run runs photo-api until it serves (then stops it) or fails, and
	// returns the CreateTable calls it made and its error.
	run := func(setup bool) (int, error) {
		t.Helper()
		calls := awsclient.NewCounter()
		awsCfg := base.Copy()
		calls.Attach(&awsCfg)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		defer stop()
		err = Run(runCtx, Config{Listener: l, Stage: stage, DatabaseURL: dbURL, AWS: &awsCfg, Dev: true, Setup: setup,
			Log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Ready: func(context.Context, string, Deps) error { stop(); return nil }})
		if err == nil && ctx.Err() != nil {
			t.Fatal("photo-api did not start in time")
		}
		return calls.Count("DynamoDB.CreateTable"), err
	}

	creates, err := run(false)
	if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "PACER_PHOTO_SETUP=true") {
		t.Fatalf("without Setup, on no table: %v; want an error naming %s and PACER_PHOTO_SETUP=true", err, name)
	}
	if creates != 0 {
		t.Fatalf("without Setup: %d CreateTable calls", creates)
	}
	if _, err := dc.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}); err == nil {
		t.Fatalf("without Setup, %s was created", name)
	}

	if creates, err := run(true); err != nil || creates != 1 {
		t.Fatalf("with Setup: %v, %d CreateTable calls; want it to serve after one", err, creates)
	}
	if creates, err := run(false); err != nil || creates != 0 {
		t.Fatalf("without Setup, on the table: %v, %d CreateTable calls; want it to serve after none", err, creates)
	}
}

// runStage returns a stage of its own for a test that runs photo-api,
// named prefix and a number (its table is deleted when t ends), and the
// AWS configuration of the stand-ins.
func runStage(ctx context.Context, t *testing.T, prefix string) (string, aws.Config) {
	t.Helper()
	stage := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
	base, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = awsclient.DynamoDB(base).DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(dynamostore.TableName(stage))})
	})
	return stage, base
}
