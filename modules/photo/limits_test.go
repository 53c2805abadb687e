package photo_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
)

// The limits below are the documented numbers (the API's maxLength and
// maximum), written out so that this test means the same on any version of
// the code.

// problemAt returns the problem err reports for field.
func problemAt(t *testing.T, err error, field string) photo.Problem {
	t.Helper()
	var ve *photo.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: err %v, want a ValidationError", field, err)
	}
	for _, p := range ve.Problems {
		if p.Field == field {
			return p
		}
	}
	t.Fatalf("problems %+v do not name %s", ve.Problems, field)
	return photo.Problem{}
}

func hangul(n int) string { return strings.Repeat("가", n) }       // 3 bytes each
func emoji(n int) string  { return strings.Repeat("👍", n) }       // 4 bytes each
func marks(n int) string  { return strings.Repeat("e\u0301", n) } // 2 code points each

// Text limits count characters (code points), as the API's maxLength and
// the Postgres checks do: Korean names up to the documented limit are
// accepted and stored, one character more is refused naming the field and
// the limit. The worst case in bytes (every text field of a photo at its
// limit in 4-byte characters) is written to DynamoDB in one item.
func TestTextLimitsCountCharacters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.dir.CreateOrganizer(e.ctx, photo.Organizer{ID: "o1", Name: hangul(200)}))(t)
	must(e.dir.CreateEvent(e.ctx, "o1", photo.Event{ID: "e1", Name: emoji(200)}))(t)
	if ev := must(e.dir.Event(e.ctx, "o1", "e1"))(t); ev.Name != emoji(200) {
		t.Fatalf("event name stored as %q", ev.Name)
	}
	must(e.dir.CreatePhotographer(e.ctx, "o1", photo.Photographer{ID: "p1", Handle: emoji(64), DisplayName: hangul(128)}))(t)
	if err := e.dir.Assign(e.ctx, "o1", "e1", "p1"); err != nil {
		t.Fatal(err)
	}
	must(e.dir.ImportRunners(e.ctx, "o1", "e1", []photo.Runner{{Bib: "1000", Name: marks(100)}, {Bib: "1001", Name: hangul(200)}}))(t)
	if rs := must(e.dir.ListRunners(e.ctx, "o1", "e1", "", 10))(t).Runners; len(rs) != 2 || rs[0].Name != marks(100) || rs[1].Name != hangul(200) {
		t.Fatalf("runners stored as %+v", rs)
	}

	rec := record(1, "p1", "1000")
	rec.OriginalFilename = hangul(251) + ".jpg"
	if res := must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t); res.Status != photo.Created || res.Photo.OriginalFilename != rec.OriginalFilename {
		t.Fatalf("251 Hangul + .jpg: %+v", res)
	}

	worst := record(2, "p1")
	worst.OriginalFilename = emoji(255)
	worst.RawKey = emoji(1024)
	worst.ProcessedKey = emoji(1024)
	worst.S3URI = "s3://" + emoji(1100-5)
	worst.Format = emoji(16)
	worst.FaceIDs = nil
	for range 100 {
		worst.FaceIDs = append(worst.FaceIDs, emoji(128))
	}
	for i := range 50 {
		worst.Bibs = append(worst.Bibs, fmt.Sprintf("%016d", i))
	}
	res := must(e.ingest.Ingest(e.ctx, "o1", "e1", worst))(t)
	if res.Status != photo.Created {
		t.Fatalf("worst case: %+v", res)
	}
	got := must(e.store.Get(e.ctx, "o1", "e1", worst.ULID))(t)
	if got.S3URI != worst.S3URI || len(got.FaceIDs) != 100 || got.PhotographerDisplayName != hangul(128) {
		t.Fatalf("worst case stored as %+v", got)
	}

	// One character more is refused, naming the field and the limit.
	tooLong := record(3, "p1", "1000")
	tooLong.OriginalFilename = hangul(252) + ".jpg"
	for _, c := range []struct {
		field string
		limit int
		err   error
	}{
		{"name", 200, second(e.dir.CreateEvent(e.ctx, "o1", photo.Event{ID: "e2", Name: hangul(201)}))},
		{"displayName", 128, second(e.dir.CreatePhotographer(e.ctx, "o1", photo.Photographer{ID: "p2", Handle: "h", DisplayName: hangul(129)}))},
		{"handle", 64, third(e.dir.UpdatePhotographer(e.ctx, "o1", "p1", photo.PhotographerPatch{Handle: new(emoji(65))}, photo.SyncOptions{}))},
		{"runners[0].name", 200, second(e.dir.ImportRunners(e.ctx, "o1", "e1", []photo.Runner{{Bib: "1002", Name: marks(100) + "e"}}))},
		{"originalFilename", 255, second(e.ingest.Ingest(e.ctx, "o1", "e1", tooLong))},
	} {
		if p := problemAt(t, c.err, c.field); p.Message != fmt.Sprintf("is longer than %d characters", c.limit) {
			t.Errorf("%s: %q", c.field, p.Message)
		}
	}
}

// A photo of the documented maximum size (1 TiB) is accepted; one byte more
// is refused, naming the field and the limit.
func TestSizeLimitIsTheDocumentedOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	const documented = 1099511627776
	rec := record(1, "p1", "1000")
	rec.Size = documented
	if res := must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t); res.Status != photo.Created || res.Photo.Size != documented {
		t.Fatalf("size %d: %+v", int64(documented), res)
	}
	rec = record(2, "p1", "1000")
	rec.Size = documented + 1
	_, err := e.ingest.Ingest(e.ctx, "o1", "e1", rec)
	if p := problemAt(t, err, "size"); !strings.Contains(p.Message, "1099511627776") {
		t.Errorf("size message %q does not name the limit", p.Message)
	}
}

// A ulid time or createdAt more than 5 minutes ahead of the service's clock
// (injected here) is refused naming the field and echoing the latest time
// accepted; up to 5 minutes ahead is accepted, and such a photo is the
// newest of the gallery only until the clock catches up.
func TestFutureTimesAreRefusedBeyondTheClockSkew(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	now := base.Add(time.Hour)
	ing := e.newIngest(photo.IngestConfig{Now: func() time.Time { return now }})
	at := func(i int, ulidAt, createdAt time.Time) photo.Record {
		r := record(i, "p1", "1000")
		r.ULID, r.CreatedAt = photo.NewULID(ulidAt), createdAt
		return r
	}
	skew := 5 * time.Minute
	latest := "2024-11-09T11:35:00.000Z" // now + 5 min
	for _, c := range []struct {
		name  string
		rec   photo.Record
		field string
	}{
		{"ulid 2 h ahead", at(1, now.Add(2*time.Hour), time.Time{}), "ulid"},
		{"ulid 12 h ahead", at(2, now.Add(12*time.Hour), time.Time{}), "ulid"},
		{"ulid 1 ms past the allowance", at(3, now.Add(skew+time.Millisecond), time.Time{}), "ulid"},
		// createdAt is the ulid's time (both order the searches), so a
		// future createdAt comes with a ulid as far ahead; each is refused.
		{"createdAt 2 h ahead", at(4, now.Add(2*time.Hour), now.Add(2*time.Hour)), "createdAt"},
		{"createdAt 1 ms past the allowance", at(5, now.Add(skew+time.Millisecond), now.Add(skew+time.Millisecond)), "createdAt"},
	} {
		_, err := ing.Ingest(e.ctx, "o1", "e1", c.rec)
		if p := problemAt(t, err, c.field); !strings.Contains(p.Message, "5m0s") || !strings.Contains(p.Message, latest) {
			t.Errorf("%s: %q does not give the allowance and %s", c.name, p.Message, latest)
		}
	}
	if items := e.scan(); len(items) != 0 {
		t.Fatalf("refused photos wrote %d items", len(items))
	}

	edge := at(6, now.Add(skew), time.Time{})
	if res := must(ing.Ingest(e.ctx, "o1", "e1", edge))(t); res.Status != photo.Created {
		t.Fatalf("ulid at the allowance: %+v", res)
	}
	edgeCreated := at(7, now.Add(skew), now.Add(skew))
	if res := must(ing.Ingest(e.ctx, "o1", "e1", edgeCreated))(t); res.Status != photo.Created {
		t.Fatalf("createdAt at the allowance: %+v", res)
	}
	pg := must(e.search.Gallery(e.ctx, "o1", "e1", photo.PageRequest{}))(t)
	if len(pg.Photos) != 2 || !slices.ContainsFunc(pg.Photos, func(p *photo.Photo) bool { return p.ULID == edge.ULID }) {
		t.Fatalf("gallery %d photos: %v", len(pg.Photos), pg.Photos)
	}
}

func second[A any](_ A, err error) error        { return err }
func third[A, B any](_ A, _ B, err error) error { return err }
