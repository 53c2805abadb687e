package photo_test

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/photo"
)

func s(it map[string]types.AttributeValue, a string) string {
	if v, ok := it[a].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func TestIngestWritesExactlyTheDocumentedItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("snaprace-kr", "seoul-marathon-2024", "ph_01ABCXYZ")
	rec := record(0, "ph_01ABCXYZ", "1234", "5678")
	rec.ULID = "01JC87JE20B8XS236M4XK1X0ZG" // a sample ulid, with its createdAt as the ulid's time
	e.ddb.Calls.Reset()
	res := must(e.ingest.Ingest(e.ctx, "snaprace-kr", "seoul-marathon-2024", rec))(t)
	if res.Status != photo.Created {
		t.Fatalf("status %s", res.Status)
	}
	if got := e.ddb.Calls.String(); got != "DynamoDB.TransactWriteItems=1" {
		t.Fatalf("calls: %s, want one TransactWriteItems", got)
	}
	items := e.scan()
	if len(items) != 3 {
		t.Fatalf("%d items, want 1 PHOTO + 2 BIB_INDEX", len(items))
	}
	pk := "ORG#snaprace-kr#EVT#seoul-marathon-2024"
	want := []map[string]string{
		{"PK": pk, "SK": "BIB#1234#PHOTO#01JC87JE20B8XS236M4XK1X0ZG", "EntityType": "BIB_INDEX",
			"GSI1PK": "EVT#seoul-marathon-2024#BIB#1234", "GSI1SK": "PHOTO#01JC87JE20B8XS236M4XK1X0ZG",
			"ulid": "01JC87JE20B8XS236M4XK1X0ZG", "orgId": "snaprace-kr", "eventId": "seoul-marathon-2024", "bib": "1234",
			"createdAt": "2024-11-09T10:30:00.000Z"},
		{"PK": pk, "SK": "BIB#5678#PHOTO#01JC87JE20B8XS236M4XK1X0ZG", "EntityType": "BIB_INDEX",
			"GSI1PK": "EVT#seoul-marathon-2024#BIB#5678", "GSI1SK": "PHOTO#01JC87JE20B8XS236M4XK1X0ZG",
			"ulid": "01JC87JE20B8XS236M4XK1X0ZG", "orgId": "snaprace-kr", "eventId": "seoul-marathon-2024", "bib": "5678",
			"createdAt": "2024-11-09T10:30:00.000Z"},
		{"PK": pk, "SK": "PHOTO#01JC87JE20B8XS236M4XK1X0ZG", "EntityType": "PHOTO",
			"GSI2PK": "PHOTOGRAPHER#ph_01ABCXYZ", "GSI2SK": "EVT#seoul-marathon-2024#TIME#2024-11-09T10:30:00.000Z",
			"ulid": "01JC87JE20B8XS236M4XK1X0ZG", "orgId": "snaprace-kr", "eventId": "seoul-marathon-2024",
			"photographerId": "ph_01ABCXYZ", "photographerHandle": "h_ph_01ABCXYZ", "photographerDisplayName": "Studio ph_01ABCXYZ",
			"format": "jpeg", "createdAt": "2024-11-09T10:30:00.000Z", "updatedAt": "2024-11-09T10:30:00.000Z"},
	}
	for i, w := range want {
		for a, v := range w {
			if got := s(items[i], a); got != v {
				t.Errorf("item %d %s = %q, want %q", i, a, got, v)
			}
		}
	}
	// GSI1 keys on BIB_INDEX only and GSI2 keys on PHOTO only, and the
	// BIB_INDEX is the light entry of exactly ten attributes (docs/photo.md,
	// The items).
	for i := range 2 {
		if len(items[i]) != 10 {
			t.Errorf("BIB_INDEX has %d attributes, want 10: %v", len(items[i]), items[i])
		}
		for _, a := range []string{"GSI2PK", "GSI2SK"} {
			if _, ok := items[i][a]; ok {
				t.Errorf("BIB_INDEX carries %s", a)
			}
		}
	}
	for _, a := range []string{"GSI1PK", "GSI1SK"} {
		if _, ok := items[2][a]; ok {
			t.Errorf("PHOTO carries %s", a)
		}
	}
	p := items[2]
	for _, a := range []string{"originalFilename", "rawKey", "processedKey", "s3Uri", "dimensions", "size", "bibs", "bibCount", "faceIds", "faceCount"} {
		if _, ok := p[a]; !ok {
			t.Errorf("PHOTO lacks %s", a)
		}
	}
	if bibs := p["bibs"].(*types.AttributeValueMemberL).Value; len(bibs) != 2 {
		t.Errorf("bibs = %v", bibs)
	}
	if n := p["bibCount"].(*types.AttributeValueMemberN).Value; n != "2" {
		t.Errorf("bibCount = %s", n)
	}
}

func TestRepostSameULIDChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(1, "p1", "1000", "1001")
	first := must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	before := e.scan()

	// The same ulid again, even with other content: nothing changes, and
	// the stored photo comes back.
	again := rec
	again.Bibs = []string{"1002", "9999"} // 9999 is no runner's: the stored photo does not show it
	again.OriginalFilename = "other.jpg"
	e.ddb.Calls.Reset()
	res := must(e.ingest.Ingest(e.ctx, "o1", "e1", again))(t)
	if res.Status != photo.Exists || res.Photo.OriginalFilename != first.Photo.OriginalFilename || len(res.UnmatchedBibs) != 0 {
		t.Fatalf("re-post: %s %+v, unmatched %v (of a photo that was not written)", res.Status, res.Photo, res.UnmatchedBibs)
	}
	if got := e.ddb.Calls.String(); got != "DynamoDB.TransactWriteItems=1" {
		t.Errorf("re-post calls: %s, want one cancelled transaction carrying the stored item", got)
	}
	batch := must(e.ingest.IngestBatch(e.ctx, "o1", "e1", []photo.Record{again}))(t)
	if batch[0].Status != photo.Exists || len(batch[0].UnmatchedBibs) != 0 {
		t.Fatalf("batch re-post: %s, unmatched %v", batch[0].Status, batch[0].UnmatchedBibs)
	}
	if after := e.scan(); !reflect.DeepEqual(before, after) {
		t.Fatalf("items changed:\nbefore %v\nafter  %v", before, after)
	}
}

func TestConcurrentRepostsMakeOneSetOfItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(2, "p1", "1000", "1001")
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := map[string]int{}
	for i := range 12 {
		wg.Go(func() {
			var st photo.WriteStatus
			var mode string
			if i%2 == 0 {
				res, err := e.ingest.Ingest(e.ctx, "o1", "e1", rec)
				if err != nil {
					t.Error(err)
					return
				}
				st, mode = res.Status, "single"
			} else {
				res, err := e.ingest.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec, record(100+i, "p1", "1003")})
				if err != nil {
					t.Error(err)
					return
				}
				st, mode = res[0].Status, "batch"
			}
			mu.Lock()
			created[mode+" "+string(st)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("outcomes: %v", created)
	var photos, bibs int
	for _, it := range e.scan() {
		if strings.Contains(s(it, "SK"), rec.ULID) {
			switch s(it, "EntityType") {
			case "PHOTO":
				photos++
			case "BIB_INDEX":
				bibs++
			}
		}
	}
	if photos != 1 || bibs != 2 {
		t.Fatalf("%d PHOTO and %d BIB_INDEX items for the ulid, want 1 and 2", photos, bibs)
	}
	if created["single created"] > 1 {
		t.Fatalf("two transactional creates of one ulid succeeded: %v", created)
	}
}

func TestUnknownBibsAreIndexedAndFlagged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	res := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(3, "p1", "1000", "9999", "1000")))(t)
	if !reflect.DeepEqual(res.UnmatchedBibs, []string{"9999"}) || !reflect.DeepEqual(res.Photo.Bibs, []string{"1000", "9999"}) {
		t.Fatalf("unmatched %v, bibs %v (duplicates collapse, unknown kept)", res.UnmatchedBibs, res.Photo.Bibs)
	}
	pg := must(e.search.ByBib(e.ctx, "o1", "e1", "9999", photo.PageRequest{}))(t)
	if len(pg.Photos) != 1 || pg.Runner != nil {
		t.Fatalf("unknown bib search: %d photos, runner %v", len(pg.Photos), pg.Runner)
	}
	// Importing the entry list later turns the flag off by itself.
	must(e.dir.ImportRunners(e.ctx, "o1", "e1", []photo.Runner{{Bib: "9999", Name: "Late Entrant"}}))(t)
	pg = must(e.search.ByBib(e.ctx, "o1", "e1", "9999", photo.PageRequest{}))(t)
	if pg.Runner == nil || pg.Runner.Name != "Late Entrant" {
		t.Fatalf("runner after import: %v", pg.Runner)
	}
}

func TestInvalidInputWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	must(e.dir.CreatePhotographer(e.ctx, "o1", photo.Photographer{ID: "p2", Handle: "h2", DisplayName: "Two"}))(t)
	e.org("o2", "e2", "q1")
	ok := record(4, "p1", "1000")
	dup := record(5, "p1", "1001")
	for _, tc := range []struct {
		name  string
		event string
		recs  []photo.Record
		field string
	}{
		{"unknown photographer", "e1", []photo.Record{ok, record(6, "nobody", "1000")}, "photos[1].photographerId"},
		{"other org's photographer", "e1", []photo.Record{record(6, "q1", "1000")}, "photos[0].photographerId"},
		{"unassigned photographer", "e1", []photo.Record{record(6, "p2", "1000")}, "photos[0].photographerId"},
		{"bib with #", "e1", []photo.Record{record(6, "p1", "12#34")}, "photos[0].bibs[0]"},
		{"bib with %", "e1", []photo.Record{record(6, "p1", "12%23")}, "photos[0].bibs[0]"},
		{"photographer id with #", "e1", []photo.Record{record(6, "p1#x", "1000")}, "photos[0].photographerId"},
		{"control character", "e1", []photo.Record{func() photo.Record { r := record(6, "p1"); r.OriginalFilename = "a\x00b"; return r }()}, "photos[0].originalFilename"},
		{"bad ulid", "e1", []photo.Record{func() photo.Record { r := record(6, "p1"); r.ULID = "not-a-ulid"; return r }()}, "photos[0].ulid"},
		{"repeated ulid", "e1", []photo.Record{dup, dup}, "photos[1].ulid"},
		{"too many bibs", "e1", []photo.Record{record(6, "p1", make([]string, photo.MaxBibs+1)...)}, "photos[0].bibs"},
		{"oversized batch", "e1", make([]photo.Record, photo.MaxBatch+1), "photos"},
		{"event id with #", "e1#x", []photo.Record{ok}, "eventId"},
	} {
		_, err := e.ingest.IngestBatch(e.ctx, "o1", tc.event, tc.recs)
		var ve *photo.ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: err %v, want a ValidationError", tc.name, err)
			continue
		}
		found := false
		for _, p := range ve.Problems {
			found = found || p.Field == tc.field
		}
		if !found {
			t.Errorf("%s: problems %+v do not name %s", tc.name, ve.Problems, tc.field)
		}
	}
	// Another org's event is not found, not forbidden: nothing leaks.
	if _, err := e.ingest.Ingest(e.ctx, "o1", "e2", ok); !errors.Is(err, photo.ErrNotFound) {
		t.Errorf("other org's event: %v", err)
	}
	if items := e.scan(); len(items) != 0 {
		t.Fatalf("invalid input wrote %d items", len(items))
	}
}

// Concurrent posts of one ulid whose contents differ (a pipeline bug, or
// two pipelines racing): exactly one post creates the photo, every other
// one reports Exists with the stored photo, and the index ends up agreeing
// with it: an entry for each of its bibs, with its createdAt, and nothing
// for a bib only a losing post named. Bib search shows the photo only
// under its own bibs.
func TestConcurrentPostsOfDifferentContentLeaveOnePhoto(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	const variants = 6
	recs := make([]photo.Record, variants)
	for k := range variants {
		r := record(3, "p1", fmt.Sprint(1000+k), "1009")
		if k > 0 {
			r.ULID = recs[0].ULID
		}
		recs[k] = r
	}
	ulid := recs[0].ULID

	var mu sync.Mutex
	var created int
	var results []*photo.Photo
	var wg sync.WaitGroup
	for i := range 36 {
		wg.Go(func() {
			rec := recs[i%variants]
			var res photo.IngestResult
			if i%4 == 3 {
				r, err := e.ingest.Ingest(e.ctx, "o1", "e1", rec)
				if err != nil {
					t.Error(err)
					return
				}
				res = r
			} else {
				rs, err := e.ingest.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec, record(100+i, "p1", "1008")})
				if err != nil {
					t.Error(err)
					return
				}
				res = rs[0]
			}
			mu.Lock()
			defer mu.Unlock()
			switch res.Status {
			case photo.Created:
				created++
			case photo.Exists:
			default:
				t.Errorf("post %d: status %s (%v)", i, res.Status, res.Err)
				return
			}
			results = append(results, res.Photo)
		})
	}
	wg.Wait()
	if created != 1 {
		t.Fatalf("%d posts created the photo, want exactly 1", created)
	}
	stored := must(e.search.Photo(e.ctx, "o1", "e1", ulid))(t)
	for _, p := range results {
		if !slices.Equal(p.Bibs, stored.Bibs) || !p.CreatedAt.Equal(stored.CreatedAt) {
			t.Errorf("a post was told bibs %v created %s; stored: %v %s", p.Bibs, p.CreatedAt, stored.Bibs, stored.CreatedAt)
		}
	}

	var photos int
	bibs := map[string]string{} // bib -> createdAt of its entry
	for _, it := range e.scan() {
		if !strings.Contains(s(it, "SK"), ulid) {
			continue
		}
		switch s(it, "EntityType") {
		case "PHOTO":
			photos++
		case "BIB_INDEX":
			bibs[s(it, "bib")] = s(it, "createdAt")
		}
	}
	want := map[string]string{}
	for _, b := range stored.Bibs {
		want[b] = photo.ISOMillis(stored.CreatedAt)
	}
	if photos != 1 || !maps.Equal(bibs, want) {
		t.Fatalf("items for the ulid: %d PHOTO, BIB_INDEX %v; want 1 PHOTO and %v", photos, bibs, want)
	}
	for k := range variants {
		b := fmt.Sprint(1000 + k)
		pg := must(e.search.ByBib(e.ctx, "o1", "e1", b, photo.PageRequest{Limit: 10}))(t)
		found := slices.ContainsFunc(pg.Photos, func(p *photo.Photo) bool { return p.ULID == ulid })
		if found != slices.Contains(stored.Bibs, b) {
			t.Errorf("bib %s search finds the photo: %v; stored bibs %v", b, found, stored.Bibs)
		}
	}
}
