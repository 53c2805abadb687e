// Package photobackend is PhotoService's module kit: the wiring of the
// domain's roles to their stores. Open applies the migrations to the
// Postgres truth, opens its pool and the PhotoService-{stage} DynamoDB
// table (creating the table, or checking it), and builds the roles
// (modules/photo) the API process runs over them: OpenAPI, as
// asynceventbackend's OpenAPI and OpenWorker build each of its processes'
// roles. photo-api runs all five.
package photobackend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerhq/pacer/migrations"
	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/modules/photo/pgstore"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// Config says where PhotoService's data lives. Open's errors do not name
// the process: its caller prefixes them.
type Config struct {
	// Stage names the table PhotoService-{Stage} (default "dev").
	Stage string
	// DatabaseURL is the Postgres truth; Open applies the migrations to
	// it.
	DatabaseURL string
	// StartTimeout bounds the first connection to DatabaseURL (default
	// DefaultStartTimeout): Open fails, saying what to check, when
	// Postgres does not answer within it.
	StartTimeout time.Duration
	// Setup creates the table if it is missing. Without it the table must
	// exist already, as the deployment creates it: Open only checks it
	// (ddb.Table.Check), so a process needs no CreateTable.
	Setup bool
	// AWS is the AWS configuration the DynamoDB client is made from, as
	// the caller loaded it (awsclient.Load, which honours
	// AWS_ENDPOINT_URL_DYNAMODB for the local stand-in) and perhaps
	// instrumented it (metrics).
	AWS aws.Config
	// CursorKey seals pagination cursors.
	CursorKey []byte
	// DDBObserver, if set, sees every DynamoDB call (metrics: consumed
	// capacity).
	DDBObserver ddb.Observer
	// Observer, if set, hears the roles' ingests and searches (metrics).
	Observer photo.Observer
	// Log receives the roles' warnings (default slog.Default()).
	Log *slog.Logger
}

// APIRoles are the roles the API process (photo-api, the one process of
// PhotoService) runs: all five, over one Postgres pool and one table.
type APIRoles struct {
	Ingest    *photo.Ingest
	Search    *photo.Search
	Directory *photo.Directory
	Privacy   *photo.Privacy
	Timing    *photo.Timing

	pool *pgxpool.Pool
}

// OpenAPI reaches cfg.DatabaseURL within cfg.StartTimeout, applies the
// migrations to it, opens a pool on it
// and the table (creating it with cfg.Setup, else checking that it exists
// with its indexes), and builds the API process's roles over them. Close
// them when done.
func OpenAPI(ctx context.Context, cfg Config) (*APIRoles, error) {
	if cfg.Stage == "" {
		cfg.Stage = "dev"
	}
	if err := reach(ctx, cfg.DatabaseURL, cmp.Or(cfg.StartTimeout, DefaultStartTimeout)); err != nil {
		return nil, err
	}
	if err := migrations.Apply(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	table, err := openTable(ctx, cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	r := NewAPIRoles(pgstore.New(pool), dynamostore.New(table), cfg.Observer, cfg.Log)
	r.pool = pool
	return r, nil
}

// NewAPIRoles builds the API process's roles over stores the caller
// opened (a test's own database and table): truth is the Postgres side,
// index the DynamoDB side; obs and log as in Config.
func NewAPIRoles(truth *pgstore.Store, index *dynamostore.Store, obs photo.Observer, log *slog.Logger) *APIRoles {
	return &APIRoles{
		Ingest: photo.NewIngest(photo.IngestConfig{Source: truth, Profiles: truth, Index: index, Copies: index, Log: log, Observer: obs}),
		Search: photo.NewSearch(photo.SearchConfig{Truth: truth, Nearby: truth, Index: index, Names: truth, Counts: index, Observer: obs}),
		Timing: photo.NewTiming(photo.TimingConfig{Store: truth}),
		Directory: photo.NewDirectory(photo.DirectoryConfig{
			Organizers: truth, Events: truth, Photographers: truth, Assignments: truth, Runners: truth, Checkpoints: truth,
			Photos: index, Copies: index, Log: log,
		}),
		Privacy: photo.NewPrivacy(photo.PrivacyConfig{Events: truth, Requests: truth, Index: index}),
	}
}

// Close closes the pool OpenAPI opened (roles made by NewAPIRoles have
// none).
func (r *APIRoles) Close() {
	if r.pool != nil {
		r.pool.Close()
	}
}

// openTable returns the stage's table, created if it is missing (Setup),
// or checked to be there to use, as the deployment made it.
func openTable(ctx context.Context, cfg Config) (*ddb.Table, error) {
	db := ddb.New(awsclient.DynamoDB(cfg.AWS), ddb.Config{CursorKey: cfg.CursorKey, Observer: cfg.DDBObserver})
	table := db.Table(dynamostore.TableName(cfg.Stage), &dynamostore.Schema)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if cfg.Setup {
		return table, table.Ensure(ctx)
	}
	if err := table.Check(ctx); err != nil {
		if errors.Is(err, ddb.ErrTable) {
			return nil, fmt.Errorf("table %s is not usable: deploy it (the deployment template creates it), "+
				"or set PACER_PHOTO_SETUP=true to let photo-api create it: %w", table.Name(), err)
		}
		return nil, fmt.Errorf("check table %s: %w", table.Name(), err)
	}
	return table, nil
}
