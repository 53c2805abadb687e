package photo_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/pacerhq/pacer/modules/photo"
)

// ingestN ingests n photos of photographer ph, each showing bibs(i), in
// batches of 100; photo i is taken at base+offset+i seconds.
func (e *env) ingestN(org, event, ph string, offset, n int, bibs func(i int) []string) []string {
	e.t.Helper()
	var ids []string
	for lo := 0; lo < n; lo += photo.MaxBatch {
		var recs []photo.Record
		for i := lo; i < min(lo+photo.MaxBatch, n); i++ {
			recs = append(recs, record(offset+i, ph, bibs(i)...))
		}
		res := must(e.ingest.IngestBatch(e.ctx, org, event, recs))(e.t)
		for _, r := range res {
			if r.Status != photo.Created {
				e.t.Fatalf("ingest: %s %v", r.Status, r.Err)
			}
			ids = append(ids, r.Photo.ULID)
		}
	}
	return ids
}

func TestBibSearchOver1000PhotosCountsCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	ids := e.ingestN("o1", "e1", "p1", 0, 1000, func(i int) []string { return []string{"1005", fmt.Sprint(2000 + i%7)} })
	// Noise: other bibs and another event of the same org.
	must(e.dir.CreateEvent(e.ctx, "o1", photo.Event{ID: "e1b", Name: "Other"}))(t)
	e.ingestN("o1", "e1", "p1", 5000, 50, func(int) []string { return []string{"1006"} })
	want := slices.Clone(ids)
	slices.Reverse(want) // newest first

	for _, limit := range []int{150, 500} {
		var got []string
		var first []string
		cursor := ""
		for page := 0; ; page++ {
			e.ddb.Calls.Reset()
			pg, err := e.search.ByBib(e.ctx, "o1", "e1", "1005", photo.PageRequest{Limit: limit, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			n := len(pg.Photos)
			wantGets := (n + 99) / 100
			if q, bg, all := e.ddb.Calls.Count("DynamoDB.Query"), e.ddb.Calls.Count("DynamoDB.BatchGetItem"), e.ddb.Calls.Total(); q != 1 || bg != wantGets || all != 1+wantGets {
				t.Fatalf("limit %d page %d (%d photos): %s; want 1 Query + %d BatchGetItem", limit, page, n, e.ddb.Calls, wantGets)
			}
			if pg.Runner == nil || pg.Runner.Bib != "1005" {
				t.Fatalf("runner %v", pg.Runner)
			}
			for _, p := range pg.Photos {
				if !slices.Contains(p.Bibs, "1005") || p.EventID != "e1" || p.OrgID != "o1" || p.S3URI == "" {
					t.Fatalf("wrong photo %+v", p)
				}
				got = append(got, p.ULID)
			}
			if page == 0 {
				first = got
			}
			if pg.Cursor == "" {
				if n == 0 {
					t.Fatalf("an empty last page")
				}
				break
			}
			if n != limit {
				t.Fatalf("page %d has %d photos and a cursor, want %d", page, n, limit)
			}
			cursor = pg.Cursor
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: %d photos; duplicates, gaps or wrong order (first %v)", limit, len(got), got[:3])
		}
		// Stable: the first page again is the same.
		again := must(e.search.ByBib(e.ctx, "o1", "e1", "1005", photo.PageRequest{Limit: limit}))(t)
		for i, p := range again.Photos {
			if p.ULID != first[i] {
				t.Fatalf("first page changed at %d", i)
			}
		}
	}
}

func TestGalleryAndPhotographerSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	must(e.dir.CreateEvent(e.ctx, "o1", photo.Event{ID: "e2", Name: "Two"}))(t)
	must(e.dir.CreatePhotographer(e.ctx, "o1", photo.Photographer{ID: "p2", Handle: "h2", DisplayName: "Two"}))(t)
	for _, a := range [][2]string{{"e2", "p1"}, {"e1", "p2"}} {
		if err := e.dir.Assign(e.ctx, "o1", a[0], a[1]); err != nil {
			t.Fatal(err)
		}
	}
	p1e1 := e.ingestN("o1", "e1", "p1", 0, 30, func(int) []string { return []string{"1000"} })
	p1e2 := e.ingestN("o1", "e2", "p1", 100, 20, func(int) []string { return []string{"1000"} })
	p2e1 := e.ingestN("o1", "e1", "p2", 200, 10, func(int) []string { return nil })
	noPh := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(300, "", "1001")))(t)

	walk := func(f func(c string) (photo.Page, error)) []string {
		var ids []string
		c := ""
		for {
			pg, err := f(c)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pg.Photos {
				ids = append(ids, p.ULID)
			}
			if c = pg.Cursor; c == "" {
				return ids
			}
		}
	}
	newestFirst := func(parts ...[]string) []string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		slices.Sort(all)
		slices.Reverse(all)
		return all
	}
	byPh := func(ph, ev string) []string {
		return walk(func(c string) (photo.Page, error) {
			return e.search.ByPhotographer(e.ctx, "o1", ph, ev, photo.PageRequest{Limit: 7, Cursor: c})
		})
	}
	if got, want := byPh("p1", ""), newestFirst(p1e1, p1e2); !slices.Equal(got, want) {
		t.Errorf("p1 everywhere: %d photos, want %d", len(got), len(want))
	}
	if got, want := byPh("p1", "e2"), newestFirst(p1e2); !slices.Equal(got, want) {
		t.Errorf("p1 in e2: %d photos, want %d", len(got), len(want))
	}
	if got, want := byPh("p2", "e1"), newestFirst(p2e1); !slices.Equal(got, want) {
		t.Errorf("p2 in e1: %d photos, want %d", len(got), len(want))
	}
	if got := byPh("p2", "e2"); len(got) != 0 {
		t.Errorf("p2 in e2: %d photos", len(got))
	}
	gallery := walk(func(c string) (photo.Page, error) {
		return e.search.Gallery(e.ctx, "o1", "e1", photo.PageRequest{Limit: 11, Cursor: c})
	})
	if want := newestFirst(p1e1, p2e1, []string{noPh.Photo.ULID}); !slices.Equal(gallery, want) {
		t.Errorf("gallery: %d photos, want %d", len(gallery), len(want))
	}
	got := must(e.search.Photo(e.ctx, "o1", "e1", noPh.Photo.ULID))(t)
	if got.PhotographerID != "" || got.Bibs[0] != "1001" {
		t.Errorf("photo without photographer: %+v", got)
	}
}

func TestTenantsCannotReachEachOther(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	e.org("o2", "e2", "p2")
	e.ingestN("o1", "e1", "p1", 0, 5, func(int) []string { return []string{"1000"} })
	e.ingestN("o2", "e2", "p2", 0, 5, func(int) []string { return []string{"1000"} })
	one := must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{Limit: 2}))(t)

	// By id: another org's event, photographer or photo is not found.
	for name, err := range map[string]error{
		"bib search": func() error { _, err := e.search.ByBib(e.ctx, "o2", "e1", "1000", photo.PageRequest{}); return err }(),
		"gallery":    func() error { _, err := e.search.Gallery(e.ctx, "o2", "e1", photo.PageRequest{}); return err }(),
		"photo":      func() error { _, err := e.search.Photo(e.ctx, "o2", "e1", one.Photos[0].ULID); return err }(),
		"photographer search": func() error {
			_, err := e.search.ByPhotographer(e.ctx, "o2", "p1", "", photo.PageRequest{})
			return err
		}(),
		"delete":   func() error { _, err := e.privacy.DeletePhoto(e.ctx, "o2", "e1", one.Photos[0].ULID); return err }(),
		"hide bib": func() error { _, err := e.privacy.RemoveBib(e.ctx, "o2", "e1", "1000", photo.HideMode); return err }(),
		"assign":   e.dir.Assign(e.ctx, "o2", "e1", "p2"),
		"sync":     func() error { _, err := e.dir.SyncPhotographer(e.ctx, "o2", "p1", photo.SyncOptions{}); return err }(),
	} {
		if !errors.Is(err, photo.ErrNotFound) {
			t.Errorf("%s across orgs: %v, want ErrNotFound", name, err)
		}
	}
	// By cursor: o1's cursor is refused in o2's search.
	if _, err := e.search.ByBib(e.ctx, "o2", "e2", "1000", photo.PageRequest{Cursor: one.Cursor}); !errors.Is(err, photo.ErrCursor) {
		t.Errorf("o1's cursor in o2: %v", err)
	}
	// By key, below the service: the store's o2 view of o1's partition
	// reads nothing.
	if pg, err := e.store.Gallery(e.ctx, "o2", "e1", photo.PageRequest{Limit: 10}); err != nil || len(pg.Photos) != 0 {
		t.Errorf("o2's view of o1's event: %d photos, %v", len(pg.Photos), err)
	}
	if _, err := e.store.Get(e.ctx, "o2", "e1", one.Photos[0].ULID); !errors.Is(err, photo.ErrNotFound) {
		t.Errorf("o2 reads o1's photo by key: %v", err)
	}
	if n := len(must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t).Photos); n != 5 {
		t.Errorf("o1 now has %d photos, want 5 (nothing deleted across orgs)", n)
	}
}
