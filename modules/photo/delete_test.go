package photo_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/pacerhq/pacer/modules/photo"
)

func TestDeletePhotoRemovesItsIndexEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	a := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(0, "p1", "1000", "1001")))(t)
	b := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(1, "p1", "1000")))(t)
	e.ddb.Calls.Reset()
	got := must(e.privacy.DeletePhoto(e.ctx, "o1", "e1", a.Photo.ULID))(t)
	if got.ULID != a.Photo.ULID || e.ddb.Calls.Count("DynamoDB.TransactWriteItems") != 1 {
		t.Fatalf("deleted %s with %s", got.ULID, e.ddb.Calls)
	}
	for _, it := range e.scan() {
		if s(it, "ulid") == a.Photo.ULID {
			t.Fatalf("left behind %s", s(it, "SK"))
		}
	}
	if len(e.scan()) != 2 {
		t.Fatalf("the other photo was touched")
	}
	if _, err := e.privacy.DeletePhoto(e.ctx, "o1", "e1", a.Photo.ULID); !errors.Is(err, photo.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t)
	if len(pg.Photos) != 1 || pg.Photos[0].ULID != b.Photo.ULID {
		t.Fatalf("bib search after delete: %v", pg.Photos)
	}
}

func TestRunnerPrivacyHideAndDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	// Bib 1000 is on photos 0-2 (with 1001 on photo 0); 1002 on 3-4, with
	// 1001 on photo 3.
	ps := []photo.Record{
		record(0, "p1", "1000", "1001"), record(1, "p1", "1000"), record(2, "p1", "1000"),
		record(3, "p1", "1002", "1001"), record(4, "p1", "1002"),
	}
	must(e.ingest.IngestBatch(e.ctx, "o1", "e1", ps))(t)

	// Hide 1000: it disappears from search and from the photos' bibs, the
	// photos stay in the gallery, bib 1001 is still found.
	n := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t).Changed
	if n != 3 {
		t.Fatalf("hide changed %d photos", n)
	}
	if pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t); len(pg.Photos) != 0 {
		t.Fatalf("hidden bib still found on %d photos", len(pg.Photos))
	}
	gallery := must(e.search.Gallery(e.ctx, "o1", "e1", photo.PageRequest{}))(t).Photos
	if len(gallery) != 5 {
		t.Fatalf("gallery has %d photos", len(gallery))
	}
	for _, p := range gallery {
		if slices.Contains(p.Bibs, "1000") || p.BibCount != len(p.Bibs) {
			t.Fatalf("photo %s still lists %v (count %d)", p.ULID, p.Bibs, p.BibCount)
		}
	}
	if pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1001", photo.PageRequest{}))(t); len(pg.Photos) != 2 {
		t.Fatalf("bib 1001 on %d photos", len(pg.Photos))
	}
	// Idempotent, and later photos do not bring the bib back.
	if n := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t).Changed; n != 0 {
		t.Fatalf("second hide changed %d", n)
	}
	later := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(10, "p1", "1000", "1003")))(t)
	if !slices.Equal(later.SuppressedBibs, []string{"1000"}) || !slices.Equal(later.Photo.Bibs, []string{"1003"}) {
		t.Fatalf("later photo: suppressed %v bibs %v", later.SuppressedBibs, later.Photo.Bibs)
	}

	// Delete 1002: photos 3 and 4 go entirely, with photo 3's 1001 entry.
	if n := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1002", photo.DeleteMode))(t).Changed; n != 2 {
		t.Fatalf("delete changed %d photos", n)
	}
	for _, it := range e.scan() {
		if u := s(it, "ulid"); u == ps[3].ULID || u == ps[4].ULID {
			t.Fatalf("left behind %s", s(it, "SK"))
		}
	}
	if pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1001", photo.PageRequest{}))(t); len(pg.Photos) != 1 {
		t.Fatalf("bib 1001 on %d photos after delete", len(pg.Photos))
	}
	if _, err := e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", "erase"); !errors.Is(err, photo.ErrInvalid) {
		t.Fatalf("bad mode: %v", err)
	}
}

// Asking to delete a runner's photos after hiding the bib deletes the
// photos it was hidden from, though no index entry leads to them any more.
func TestPrivacyDeleteAfterHide(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	ps := []photo.Record{record(0, "p1", "1000", "1001"), record(1, "p1", "1000"), record(2, "p1", "1002")}
	must(e.ingest.IngestBatch(e.ctx, "o1", "e1", ps))(t)
	if n := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t).Changed; n != 2 {
		t.Fatalf("hide changed %d photos, want 2", n)
	}
	if n := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.DeleteMode))(t).Changed; n != 2 {
		t.Fatalf("delete after hide changed %d photos, want 2", n)
	}
	gallery := must(e.search.Gallery(e.ctx, "o1", "e1", photo.PageRequest{}))(t).Photos
	if len(gallery) != 1 || gallery[0].ULID != ps[2].ULID {
		t.Fatalf("gallery after delete: %v", gallery)
	}
	if pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1001", photo.PageRequest{}))(t); len(pg.Photos) != 0 {
		t.Fatalf("photo 0's other bib still finds %d photos", len(pg.Photos))
	}
}

// hookTruth runs hook once, right after ingest has read the truth (so
// ingest holds a view from before whatever hook does).
type hookTruth struct {
	photo.IngestSource
	once sync.Once
	hook func()
}

func (h *hookTruth) IngestTruth(ctx context.Context, q photo.IngestQuery) (photo.IngestTruth, error) {
	t, err := h.IngestSource.IngestTruth(ctx, q)
	h.once.Do(h.hook)
	return t, err
}

// A privacy request that lands between ingest's read of the truth and its
// writes: the request's walk cannot see the photos yet and ingest did not
// see the request, yet no photo keeps the bib. Ingest re-checks after its
// writes and strikes the bib, reporting it as suppressed.
func TestPrivacyRequestDuringIngest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	for _, batch := range []bool{false, true} {
		bib := "1000"
		if batch {
			bib = "1001"
		}
		ing := privacyDuringIngest(t, e, e.store, bib, photo.HideMode)
		var results []photo.IngestResult
		if batch {
			results = must(ing.IngestBatch(e.ctx, "o1", "e1", []photo.Record{record(20, "p1", bib, "1009"), record(21, "p1", bib)}))(t)
		} else {
			results = []photo.IngestResult{must(ing.Ingest(e.ctx, "o1", "e1", record(10, "p1", bib, "1009")))(t)}
		}
		for _, r := range results {
			if r.Status != photo.Created || slices.Contains(r.Photo.Bibs, bib) || !slices.Equal(r.SuppressedBibs, []string{bib}) {
				t.Fatalf("batch=%v: result %s bibs %v suppressed %v", batch, r.Status, r.Photo.Bibs, r.SuppressedBibs)
			}
			stored := must(e.search.Photo(e.ctx, "o1", "e1", r.Photo.ULID))(t)
			if slices.Contains(stored.Bibs, bib) || stored.BibCount != len(stored.Bibs) {
				t.Fatalf("batch=%v: stored photo lists %v (count %d)", batch, stored.Bibs, stored.BibCount)
			}
		}
		if pg := must(e.search.ByBib(e.ctx, "o1", "e1", bib, photo.PageRequest{})); len(pg(t).Photos) != 0 {
			t.Fatalf("batch=%v: hidden bib %s still found", batch, bib)
		}
		for _, it := range e.scan() {
			if s(it, "EntityType") == "BIB_INDEX" && s(it, "bib") == bib {
				t.Fatalf("batch=%v: index entry %s left", batch, s(it, "SK"))
			}
		}
	}
}
