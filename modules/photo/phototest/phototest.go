// Package phototest gives PhotoService tests their own Postgres database
// (migrated) and DynamoDB table on the local stand-ins, with the domain's
// roles wired over them.
//
//	func TestMain(m *testing.M) {
//		standin.RunTests(m, standin.Config{DynamoDB: true, Postgres: true})
//	}
//
//	func TestX(t *testing.T) {
//		env := phototest.New(ctx, t)
//		...
//	}
//
// A test that cannot reach the stand-ins fails, saying how to start them.
package phototest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerhq/pacer/migrations"
	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/modules/photo/pgstore"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
	"github.com/pacerhq/pacer/sdk/pgtest"
)

// Env is one test's PhotoService stack.
type Env struct {
	// DDB is the test's table and its counted client.
	DDB *ddbtest.Env
	// Pool connects to the test's migrated Postgres database.
	Pool *pgxpool.Pool
	// Truth is the Postgres truth over Pool.
	Truth *pgstore.Store
	// Store is the DynamoDB index over DDB's table.
	Store *dynamostore.Store
	// Ingest, Search, Directory, Privacy and Timing are the domain's roles
	// over Truth and Store.
	Ingest    *photo.Ingest
	Search    *photo.Search
	Directory *photo.Directory
	Privacy   *photo.Privacy
	Timing    *photo.Timing
}

// New creates a migrated Postgres database and a table for t; both, and
// the pool, go away when t ends.
func New(ctx context.Context, t testing.TB) *Env {
	t.Helper()
	url := pgtest.NewDatabase(t)
	if err := migrations.Apply(ctx, url); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	de := ddbtest.New(t, &dynamostore.Schema)
	truth, store := pgstore.New(pool), dynamostore.New(de.Table)
	return &Env{
		DDB: de, Pool: pool, Truth: truth, Store: store,
		Ingest: photo.NewIngest(photo.IngestConfig{Source: truth, Profiles: truth, Index: store, Copies: store}),
		Search: photo.NewSearch(photo.SearchConfig{Truth: truth, Nearby: truth, Index: store, Names: truth, Counts: store}),
		Timing: photo.NewTiming(photo.TimingConfig{Store: truth}),
		Directory: photo.NewDirectory(photo.DirectoryConfig{
			Organizers: truth, Events: truth, Photographers: truth, Assignments: truth, Runners: truth, Checkpoints: truth,
			Photos: store, Copies: store,
		}),
		Privacy: photo.NewPrivacy(photo.PrivacyConfig{Events: truth, Requests: truth, Index: store}),
	}
}
