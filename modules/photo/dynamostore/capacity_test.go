package dynamostore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/capacity"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// capacityPhoto is a typical photo: three bibs, two faces, a
// photographer, real-length keys and face ids.
func capacityPhoto(i int, at time.Time) *photo.Photo {
	ulid := fmt.Sprintf("01JC82P62%017d", i)
	return &photo.Photo{ULID: ulid, OrgID: "org-seoul-marathon", EventID: "2026-seoul-marathon",
		OriginalFilename: fmt.Sprintf("DSC_%05d.JPG", i),
		RawKey:           "raw/org-seoul-marathon/2026-seoul-marathon/" + ulid + ".jpg",
		ProcessedKey:     "processed/org-seoul-marathon/2026-seoul-marathon/" + ulid + ".jpg",
		S3URI:            "s3://pacer-photos-prod/processed/org-seoul-marathon/2026-seoul-marathon/" + ulid + ".jpg",
		Dimensions:       photo.Dimensions{Width: 6000, Height: 4000}, Format: "jpeg", Size: 8_345_678,
		Bibs: []string{"10234", "10872", "23001"}, BibCount: 3,
		FaceIDs: []string{"3f1c9a52-6a1e-4b7e-9d2a-1c5b8e7f0a11", "8b2e4d61-0f3c-4a9b-b7e2-5d6c1a9f3e22"}, FaceCount: 2,
		PhotographerID: "pg-000123", PhotographerHandle: "runshots", PhotographerDisplayName: "Run Shots Studio",
		CreatedAt: at, UpdatedAt: at}
}

// TestCapacityModel measures the photo table's operations on real items
// (capacity.Meter on DynamoDB Local) and fails if a figure drifted from
// CapacityModel (docs/capacity.md).
func TestCapacityModel(t *testing.T) {
	ctx := context.Background()
	env := ddbtest.New(t, &Schema)
	m := capacity.NewMeter(env.Client, map[string]*ddb.Schema{env.Table.Name(): &Schema})
	s := New(ddb.New(m, ddb.Config{CursorKey: []byte("photo-capacity-cursor-key-0123456789")}).Table(env.Table.Name(), &Schema))
	got := map[string]capacity.Usage{}
	take := func(op string, per int) { got[op] = capacity.Measure(op, per, m.Take()) }
	at := time.Date(2026, 4, 5, 8, 31, 7, 123_000_000, time.UTC)
	if _, err := s.Create(ctx, capacityPhoto(0, at)); err != nil {
		t.Fatal(err)
	}
	take("ingest (1 photo, 3 bibs)", 1)
	batch := make([]*photo.Photo, 25)
	for i := range batch {
		batch[i] = capacityPhoto(i+1, at.Add(time.Duration(i+1)*time.Second))
	}
	if _, err := s.CreateBatch(ctx, "org-seoul-marathon", batch); err != nil {
		t.Fatal(err)
	}
	take("ingest batch (25 photos, 3 bibs each)", 25)
	r := photo.PageRequest{Limit: 20}
	if p, err := s.ByBib(ctx, photo.BibQuery{Org: "org-seoul-marathon", Event: "2026-seoul-marathon", Bib: "10234"}, r); err != nil || len(p.Photos) != 20 {
		t.Fatalf("by bib: %d, %v", len(p.Photos), err)
	}
	take("search by bib (20)", 1)
	if p, err := s.ByPhotographer(ctx, photo.PhotographerQuery{Org: "org-seoul-marathon", Photographer: "pg-000123", Events: []string{"2026-seoul-marathon"}}, r); err != nil || len(p.Photos) != 20 {
		t.Fatalf("by photographer: %d, %v", len(p.Photos), err)
	}
	take("search by photographer (20, 1 event)", 1)
	if p, err := s.Gallery(ctx, "org-seoul-marathon", "2026-seoul-marathon", r); err != nil || len(p.Photos) != 20 {
		t.Fatalf("gallery: %d, %v", len(p.Photos), err)
	}
	take("gallery (20)", 1)
	// The search by passing time: a second photographer at another point,
	// with 5 photos; each stream's range covers all its photos.
	other := make([]*photo.Photo, 5)
	for i := range other {
		other[i] = capacityPhoto(100+i, at.Add(time.Duration(i)*time.Second))
		other[i].PhotographerID = "pg-000456"
	}
	if _, err := s.CreateBatch(ctx, "org-seoul-marathon", other); err != nil {
		t.Fatal(err)
	}
	m.Take() // not measured
	tq := photo.TimeQuery{Org: "org-seoul-marathon", Event: "2026-seoul-marathon", Streams: []photo.TimeStream{
		{Photographer: "pg-000123", From: at.Add(-time.Minute), To: at.Add(time.Minute)},
		{Photographer: "pg-000456", From: at.Add(-time.Minute), To: at.Add(time.Minute), Clock: 30 * time.Second},
	}}
	if p, err := s.ByTime(ctx, tq, r); err != nil || len(p.Photos) != 20 {
		t.Fatalf("by time: %d, %v", len(p.Photos), err)
	}
	take("search by passing time (20, 2 photographers)", 1)

	for _, d := range capacity.Compare(CapacityModel, got) {
		t.Error(d)
	}
}

// TestCapacityDoc fails when docs/capacity.md does not show the photo
// model's tables as the model has them (and prints them).
func TestCapacityDoc(t *testing.T) {
	blocks := []string{capacity.Markdown(CapacityModel), capacity.CeilingMarkdown(CapacityModel, []capacity.CeilingRow{
		{Flow: "photo (Create)", Ops: []string{"ingest (1 photo, 3 bibs)"}, Keys: []string{"W|table|ORG#", "W|GSI2|PHOTOGRAPHER#"}},
		{Flow: "photo (CreateBatch)", Ops: []string{"ingest batch (25 photos, 3 bibs each)"}, Keys: []string{"W|table|ORG#", "W|GSI2|PHOTOGRAPHER#"}},
		{Flow: "search by bib", Ops: []string{"search by bib (20)"}, Keys: []string{"R|GSI1|EVT#", "R|table|ORG#"}},
		{Flow: "gallery page", Ops: []string{"gallery (20)"}, Keys: []string{"R|table|ORG#"}},
		{Flow: "search by passing time", Ops: []string{"search by passing time (20, 2 photographers)"}, Keys: []string{"R|GSI2|PHOTOGRAPHER#"}},
	})}
	missing, err := capacity.MissingFromDoc("../../../docs/capacity.md", blocks...)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range missing {
		t.Errorf("docs/capacity.md lacks this table of the model; paste it:\n\n%s", b)
	}
}
