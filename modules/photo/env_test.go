package photo_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/modules/photo/pgstore"
	"github.com/pacerhq/pacer/modules/photo/phototest"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{DynamoDB: true, Postgres: true})
}

// env is one test's own Postgres database and DynamoDB table.
type env struct {
	t     *testing.T
	ctx   context.Context
	ddb   *ddbtest.Env
	pool  *pgxpool.Pool
	truth *pgstore.Store
	store *dynamostore.Store
	// The domain's roles over truth and store.
	ingest  *photo.Ingest
	search  *photo.Search
	dir     *photo.Directory
	privacy *photo.Privacy
	timing  *photo.Timing
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	k := phototest.New(ctx, t)
	return &env{t: t, ctx: ctx, ddb: k.DDB, pool: k.Pool, truth: k.Truth, store: k.Store,
		ingest: k.Ingest, search: k.Search, dir: k.Directory, privacy: k.Privacy, timing: k.Timing}
}

// newIngest returns an Ingest with cfg's ports, the test's truth and store
// standing in for those cfg leaves unset.
func (e *env) newIngest(cfg photo.IngestConfig) *photo.Ingest {
	if cfg.Source == nil {
		cfg.Source = e.truth
	}
	if cfg.Profiles == nil {
		cfg.Profiles = e.truth
	}
	if cfg.Index == nil {
		cfg.Index = e.store
	}
	if cfg.Copies == nil {
		cfg.Copies = e.store
	}
	return photo.NewIngest(cfg)
}

// org creates an organizer with an event, a photographer assigned to it,
// and runners with bibs 1000..1009.
func (e *env) org(org, event, photographer string) {
	e.t.Helper()
	must(e.dir.CreateOrganizer(e.ctx, photo.Organizer{ID: org, Name: "Org " + org}))(e.t)
	must(e.dir.CreateEvent(e.ctx, org, photo.Event{ID: event, Name: "Race " + event, StartsOn: "2024-11-09"}))(e.t)
	if photographer != "" {
		must(e.dir.CreatePhotographer(e.ctx, org, photo.Photographer{ID: photographer, Handle: "h_" + photographer, DisplayName: "Studio " + photographer}))(e.t)
		if err := e.dir.Assign(e.ctx, org, event, photographer); err != nil {
			e.t.Fatal(err)
		}
	}
	var rs []photo.Runner
	for i := range 10 {
		rs = append(rs, photo.Runner{Bib: fmt.Sprint(1000 + i), Name: fmt.Sprintf("Runner %d", i)})
	}
	must(e.dir.ImportRunners(e.ctx, org, event, rs))(e.t)
}

// must(f())(t) returns f's value, failing the test if f failed.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

var base = time.Date(2024, 11, 9, 10, 30, 0, 0, time.UTC)

// record returns a processed-photo record taken at base+i seconds.
func record(i int, photographer string, bibs ...string) photo.Record {
	at := base.Add(time.Duration(i) * time.Second)
	id := photo.NewULID(at)
	return photo.Record{
		ULID:             id,
		OriginalFilename: fmt.Sprintf("DSC_%04d.jpg", i),
		RawKey:           fmt.Sprintf("org/evt/raw/DSC_%04d.jpg", i),
		ProcessedKey:     "org/evt/processed/" + id + ".jpg",
		S3URI:            "s3://snaprace-images-test/org/evt/processed/" + id + ".jpg",
		Dimensions:       photo.Dimensions{Width: 3840, Height: 2160},
		Format:           "jpeg",
		Size:             2048576,
		Bibs:             bibs,
		FaceIDs:          []string{"face-1", "face-2"},
		PhotographerID:   photographer,
		CreatedAt:        at,
	}
}

// scan returns every item of the test's table, sorted by key.
func (e *env) scan() []ddb.Item {
	e.t.Helper()
	var out []ddb.Item
	in := &dynamodb.ScanInput{TableName: aws.String(e.ddb.Table.Name()), ConsistentRead: aws.Bool(true)}
	for {
		res, err := e.ddb.Client.Scan(e.ctx, in)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, res.Items...)
		if res.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := keyOf(out[i]), keyOf(out[j])
		return a.PK < b.PK || a.PK == b.PK && a.SK < b.SK
	})
	return out
}

func keyOf(it ddb.Item) ddb.Key { return ddb.Key{PK: s(it, "PK"), SK: s(it, "SK")} }
