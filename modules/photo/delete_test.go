package photo_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/pacerhq/pacer/modules/photo"
)

func TestDeletePhotoRemovesItsIndexEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	a := must(e.svc.Ingest(e.ctx, "o1", "e1", record(0, "p1", "1000", "1001")))(t)
	b := must(e.svc.Ingest(e.ctx, "o1", "e1", record(1, "p1", "1000")))(t)
	e.ddb.Calls.Reset()
	got := must(e.svc.DeletePhoto(e.ctx, "o1", "e1", a.Photo.ULID))(t)
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
	if _, err := e.svc.DeletePhoto(e.ctx, "o1", "e1", a.Photo.ULID); !errors.Is(err, photo.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	pg := must(e.svc.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t)
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
	must(e.svc.IngestBatch(e.ctx, "o1", "e1", ps))(t)

	// Hide 1000: it disappears from search and from the photos' bibs, the
	// photos stay in the gallery, bib 1001 is still found.
	n := must(e.svc.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t)
	if n != 3 {
		t.Fatalf("hide changed %d photos", n)
	}
	if pg := must(e.svc.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t); len(pg.Photos) != 0 {
		t.Fatalf("hidden bib still found on %d photos", len(pg.Photos))
	}
	gallery := must(e.svc.Gallery(e.ctx, "o1", "e1", photo.PageRequest{}))(t).Photos
	if len(gallery) != 5 {
		t.Fatalf("gallery has %d photos", len(gallery))
	}
	for _, p := range gallery {
		if slices.Contains(p.Bibs, "1000") || p.BibCount != len(p.Bibs) {
			t.Fatalf("photo %s still lists %v (count %d)", p.ULID, p.Bibs, p.BibCount)
		}
	}
	if pg := must(e.svc.ByBib(e.ctx, "o1", "e1", "1001", photo.PageRequest{}))(t); len(pg.Photos) != 2 {
		t.Fatalf("bib 1001 on %d photos", len(pg.Photos))
	}
	// Idempotent, and later photos do not bring the bib back.
	if n := must(e.svc.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t); n != 0 {
		t.Fatalf("second hide changed %d", n)
	}
	later := must(e.svc.Ingest(e.ctx, "o1", "e1", record(10, "p1", "1000", "1003")))(t)
	if !slices.Equal(later.SuppressedBibs, []string{"1000"}) || !slices.Equal(later.Photo.Bibs, []string{"1003"}) {
		t.Fatalf("later photo: suppressed %v bibs %v", later.SuppressedBibs, later.Photo.Bibs)
	}

	// Delete 1002: photos 3 and 4 go entirely, with photo 3's 1001 entry.
	if n := must(e.svc.RemoveBib(e.ctx, "o1", "e1", "1002", photo.DeleteMode))(t); n != 2 {
		t.Fatalf("delete changed %d photos", n)
	}
	for _, it := range e.scan() {
		if u := s(it, "ulid"); u == ps[3].ULID || u == ps[4].ULID {
			t.Fatalf("left behind %s", s(it, "SK"))
		}
	}
	if pg := must(e.svc.ByBib(e.ctx, "o1", "e1", "1001", photo.PageRequest{}))(t); len(pg.Photos) != 1 {
		t.Fatalf("bib 1001 on %d photos after delete", len(pg.Photos))
	}
	if _, err := e.svc.RemoveBib(e.ctx, "o1", "e1", "1000", "erase"); !errors.Is(err, photo.ErrInvalid) {
		t.Fatalf("bad mode: %v", err)
	}
}
