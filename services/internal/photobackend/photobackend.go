// Package photobackend is PhotoService's module kit: the wiring of the
// domain's roles to their stores. Open applies the migrations to the
// Postgres truth, opens its pool and the PhotoService-{stage} DynamoDB
// table (creating the table, or checking it), and returns a Backend, whose
// Ingest, Search, Directory and Privacy build the roles (modules/photo) a
// process runs over them. photo-api runs all four.
package photobackend

import (
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

// Backend holds PhotoService's stores, and builds the roles over them.
// Open makes one over the pool and table it opens; a test may make one
// over its own stores (phototest's).
type Backend struct {
	// Truth is the Postgres side (organizers, events, photographers,
	// assignments, runners, privacy requests, sync checkpoints).
	Truth *pgstore.Store
	// Index is the DynamoDB side (the photos and their bib index).
	Index *dynamostore.Store
	// Observer and Log are given to the roles built (see Config).
	Observer photo.Observer
	Log      *slog.Logger

	pool *pgxpool.Pool
}

// Open applies the migrations to cfg.DatabaseURL, opens a pool on it and
// the table (creating it with cfg.Setup, else checking that it exists with
// its indexes), and returns the Backend over them. Close it when done.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	if cfg.Stage == "" {
		cfg.Stage = "dev"
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
	return &Backend{Truth: pgstore.New(pool), Index: dynamostore.New(table), Observer: cfg.Observer, Log: cfg.Log, pool: pool}, nil
}

// Close closes the pool Open opened (a Backend made otherwise has none).
func (b *Backend) Close() {
	if b.pool != nil {
		b.pool.Close()
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

// Ingest builds the pipeline's role: photo ingest.
func (b *Backend) Ingest() *photo.Ingest {
	return photo.NewIngest(photo.IngestConfig{
		Source: b.Truth, Profiles: b.Truth, Index: b.Index, Copies: b.Index,
		Log: b.Log, Observer: b.Observer,
	})
}

// Search builds the searches' role.
func (b *Backend) Search() *photo.Search {
	return photo.NewSearch(photo.SearchConfig{Truth: b.Truth, Index: b.Index, Observer: b.Observer})
}

// Directory builds the organizers' role: their directory and the
// photographer sync.
func (b *Backend) Directory() *photo.Directory {
	return photo.NewDirectory(photo.DirectoryConfig{
		Organizers: b.Truth, Events: b.Truth, Photographers: b.Truth, Assignments: b.Truth, Runners: b.Truth, Checkpoints: b.Truth,
		Photos: b.Index, Copies: b.Index, Log: b.Log,
	})
}

// Privacy builds the removals' role: photo deletes and privacy requests.
func (b *Backend) Privacy() *photo.Privacy {
	return photo.NewPrivacy(photo.PrivacyConfig{Events: b.Truth, Requests: b.Truth, Index: b.Index})
}
