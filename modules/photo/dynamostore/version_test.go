package dynamostore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) { standin.RunTests(m, standin.Config{DynamoDB: true}) }

// Two updates in the same millisecond leave updatedAt as it was; the
// version still moves, so a writer holding the older read is refused.
func TestOptimisticCheckSeesUpdatesInOneMillisecond(t *testing.T) {
	ctx := context.Background()
	env := ddbtest.New(t, &Schema)
	s := New(env.Table)
	at := time.Date(2024, 11, 9, 10, 30, 0, 0, time.UTC)
	p := &photo.Photo{ULID: "01JC82P6200000000000000019", OrgID: "org", EventID: "ev", OriginalFilename: "a.jpg",
		RawKey: "r", ProcessedKey: "p", S3URI: "s3://b/p", Dimensions: photo.Dimensions{Width: 1, Height: 1}, Format: "jpeg", Size: 1,
		Bibs: []string{"1"}, BibCount: 1, FaceIDs: []string{}, PhotographerID: "ph", CreatedAt: at, UpdatedAt: at}
	if _, err := s.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	v := s.scope("org")
	k := PhotoKey("org", "ev", p.ULID)
	read := func() *PhotoItem {
		it, err := v.photos.GetStrong(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	now := at.Add(time.Minute)
	if ok, err := s.SetPhotographer(ctx, p, photo.Photographer{ID: "ph", Handle: "a", DisplayName: "A"}, now); !ok || err != nil {
		t.Fatalf("first update: %v %v", ok, err)
	}
	stale := read()
	if ok, err := s.SetPhotographer(ctx, p, photo.Photographer{ID: "ph", Handle: "b", DisplayName: "B"}, now); !ok || err != nil {
		t.Fatalf("second update: %v %v", ok, err)
	}
	fresh := read()
	if fresh.UpdatedAt != stale.UpdatedAt || fresh.Version != stale.Version+1 {
		t.Fatalf("updatedAt %s→%s, version %d→%d", stale.UpdatedAt, fresh.UpdatedAt, stale.Version, fresh.Version)
	}
	err := v.photos.Update(k).Set("format", "png").If(unchanged(stale)).Run(ctx)
	if !errors.Is(err, ddb.ErrConditionFailed) {
		t.Fatalf("a writer holding the older read: %v, want ErrConditionFailed", err)
	}
	if err := v.photos.Update(k).Set("format", "png").If(unchanged(fresh)).Run(ctx); err != nil {
		t.Fatalf("a writer holding the latest read: %v", err)
	}
}
