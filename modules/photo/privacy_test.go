package photo_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/pgstore"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// privacyDuringIngest returns an Ingest over index that reads the truth,
// then sees bib's privacy request (mode) land, then writes.
func privacyDuringIngest(t *testing.T, e *env, index photo.IngestIndex, bib, mode string) *photo.Ingest {
	return e.newIngest(photo.IngestConfig{Index: index, Source: &hookTruth{IngestSource: pgstore.New(e.pool), hook: func() {
		if _, err := e.privacy.RemoveBib(e.ctx, "o1", "e1", bib, mode); err != nil {
			t.Error(err)
		}
	}}})
}

// requestRecordedDuringIngest is privacyDuringIngest for a request that is
// recorded in Postgres while ingest runs, but whose walk has not run yet.
func requestRecordedDuringIngest(t *testing.T, e *env, index photo.IngestIndex, bib, mode string) *photo.Ingest {
	return e.newIngest(photo.IngestConfig{Index: index, Source: &hookTruth{IngestSource: pgstore.New(e.pool), hook: func() {
		if _, err := pgstore.New(e.pool).HideBib(e.ctx, photo.PrivacyRequest{Org: "o1", Event: "e1", Bib: bib, Mode: mode}); err != nil {
			t.Error(err)
		}
	}}})
}

// A delete request landing between ingest's read and its writes: the photo
// is not kept, and the result says so.
func TestPrivacyDeleteDuringIngest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	for _, batch := range []bool{false, true} {
		bib := map[bool]string{false: "1000", true: "1001"}[batch]
		ing := privacyDuringIngest(t, e, e.store, bib, photo.DeleteMode)
		rec := record(map[bool]int{false: 10, true: 11}[batch], "p1", bib, "1009")
		var r photo.IngestResult
		if batch {
			r = must(ing.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec}))(t)[0]
		} else {
			r = must(ing.Ingest(e.ctx, "o1", "e1", rec))(t)
		}
		if r.Status != photo.Suppressed || !slices.Equal(r.SuppressedBibs, []string{bib}) {
			t.Fatalf("batch=%v: %s suppressed %v, want suppressed [%s]", batch, r.Status, r.SuppressedBibs, bib)
		}
		if _, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID); !errors.Is(err, photo.ErrNotFound) {
			t.Fatalf("batch=%v: the photo survives its delete request: %v", batch, err)
		}
		for _, it := range e.scan() {
			if s(it, "ulid") == rec.ULID {
				t.Fatalf("batch=%v: item %s left", batch, s(it, "SK"))
			}
		}
	}
}

// After a delete request, a photo showing the bib is not written at all;
// after a hide, it is written without the bib, and a later delete request
// still finds it.
func TestPrivacyAppliesToLaterPhotos(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1002", photo.DeleteMode))(t)
	res := must(e.ingest.IngestBatch(e.ctx, "o1", "e1", []photo.Record{record(1, "p1", "1002", "1003", "9999"), record(2, "p1", "1003", "9999")}))(t)
	if res[0].Status != photo.Suppressed || res[1].Status != photo.Created {
		t.Fatalf("after a delete request: %s, %s; want suppressed, created", res[0].Status, res[1].Status)
	}
	// 9999 is no runner's: flagged on the written photo only.
	if len(res[0].UnmatchedBibs) != 0 || !slices.Equal(res[1].UnmatchedBibs, []string{"9999"}) {
		t.Fatalf("unmatched bibs: suppressed %v, created %v; want none, [9999]", res[0].UnmatchedBibs, res[1].UnmatchedBibs)
	}
	if pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1003", photo.PageRequest{}))(t); len(pg.Photos) != 1 {
		t.Fatalf("bib 1003 on %d photos, want only the unsuppressed one", len(pg.Photos))
	}

	a := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(3, "p1", "1000")))(t)
	must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t)
	b := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(4, "p1", "1000", "1001")))(t)
	if b.Status != photo.Created || !slices.Equal(b.Photo.Bibs, []string{"1001"}) || !slices.Equal(b.SuppressedBibs, []string{"1000"}) {
		t.Fatalf("after a hide: %s bibs %v suppressed %v", b.Status, b.Photo.Bibs, b.SuppressedBibs)
	}
	if n := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.DeleteMode))(t).Changed; n != 2 {
		t.Fatalf("delete after hide changed %d photos, want 2 (one hidden by the request, one at ingest)", n)
	}
	for _, id := range []string{a.Photo.ULID, b.Photo.ULID} {
		if _, err := e.search.Photo(e.ctx, "o1", "e1", id); !errors.Is(err, photo.ErrNotFound) {
			t.Fatalf("photo %s survives the delete request: %v", id, err)
		}
	}
}

// A stale index entry (left by a post whose PHOTO put failed, re-posted
// with other bibs) must not make a delete request delete a photo that
// neither shows the bib nor had it hidden; the entry itself is dropped.
func TestPrivacyDeleteIgnoresStaleEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(40, "p1", "1000")
	lossy := ddb.New(lossyClient{Client: e.ddb.Client, failPut: func(sk string) bool { return sk == "PHOTO#"+rec.ULID }},
		ddb.Config{BatchRetries: 2, BatchBackoff: 1e6, BatchBackoffMax: 2e6, CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")})
	ing := e.lossyIngest(lossy)
	if res := must(ing.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec}))(t); res[0].Status != photo.Failed {
		t.Fatalf("first post %s, want failed", res[0].Status)
	}
	rec.Bibs = []string{"1001"}
	if res := must(e.ingest.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec}))(t); res[0].Status != photo.Created {
		t.Fatalf("re-post %s, want created", res[0].Status)
	}
	if n := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.DeleteMode))(t).Changed; n != 0 {
		t.Fatalf("delete request for 1000 changed %d photos, want 0", n)
	}
	if _, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID); err != nil {
		t.Fatalf("the photo showing only 1001 was deleted: %v", err)
	}
	for _, it := range e.scan() {
		if s(it, "EntityType") == "BIB_INDEX" && s(it, "bib") == "1000" {
			t.Fatalf("stale entry %s left", s(it, "SK"))
		}
	}
}

// lostAnswerIndex reports the first photo of every CreateBatch as Failed
// though it was written (the put's answer lost).
type lostAnswerIndex struct{ photo.IngestIndex }

func (l lostAnswerIndex) CreateBatch(ctx context.Context, org string, ps []*photo.Photo) ([]photo.WriteResult, error) {
	out, err := l.IngestIndex.CreateBatch(ctx, org, ps)
	if err == nil && len(out) > 0 && out[0].Status == photo.Created {
		out[0] = photo.WriteResult{Status: photo.Failed, Err: context.DeadlineExceeded}
	}
	return out, err
}

// A photo reported Failed may have been written: a hide landing during its
// ingest is applied to it too.
func TestPrivacyAppliesToFailedButWrittenPhotos(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	ing := privacyDuringIngest(t, e, lostAnswerIndex{e.store}, "1000", photo.HideMode)
	rec := record(30, "p1", "1000", "1001")
	if res := must(ing.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec}))(t); res[0].Status != photo.Failed {
		t.Fatalf("result %s, want failed (as the wrapper reports)", res[0].Status)
	}
	if pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t); len(pg.Photos) != 0 {
		t.Fatalf("hidden bib 1000 still finds %d photo(s)", len(pg.Photos))
	}
	if p := must(e.search.Photo(e.ctx, "o1", "e1", rec.ULID))(t); !slices.Equal(p.Bibs, []string{"1001"}) {
		t.Fatalf("stored photo lists %v, want [1001]", p.Bibs)
	}
}

// failApplyOnce fails the first ApplyPrivacy (a transient DynamoDB error).
type failApplyOnce struct {
	photo.IngestIndex
	done atomic.Bool
}

func (f *failApplyOnce) ApplyPrivacy(ctx context.Context, r photo.PrivacyRequest, ulid string, now time.Time) (*photo.Photo, bool, error) {
	if f.done.CompareAndSwap(false, true) {
		return nil, false, errors.New("transient error")
	}
	return f.IngestIndex.ApplyPrivacy(ctx, r, ulid, now)
}

// If settling a delete request fails, the ingest fails, and its retry
// (which prepare already suppresses) still deletes the stored photo.
func TestPrivacyRetryAfterAFailedSettle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	ing := privacyDuringIngest(t, e, &failApplyOnce{IngestIndex: e.store}, "1000", photo.DeleteMode)
	rec := record(60, "p1", "1000", "1001")
	if _, err := ing.Ingest(e.ctx, "o1", "e1", rec); err == nil {
		t.Fatal("the first ingest succeeded though settling failed")
	}
	r := must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	if r.Status != photo.Suppressed {
		t.Fatalf("retry: %s, want suppressed", r.Status)
	}
	if _, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID); !errors.Is(err, photo.ErrNotFound) {
		t.Fatalf("the photo survives the delete request: %v", err)
	}
}

// A re-post of a stored ulid with another bib, under a delete request for
// that bib, neither deletes the stored photo (it never showed the bib) nor
// claims it was not kept: it is reported as existing.
func TestPrivacyRepostDoesNotDeleteAPhotoNotShowingTheBib(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(64, "p1", "1001")
	must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	// The delete request lands during a batch re-post whose result is
	// Failed (its answer lost), and before a plain re-post.
	ing := privacyDuringIngest(t, e, lostAnswerIndex{e.store}, "1000", photo.DeleteMode)
	rec.Bibs = []string{"1000"}
	must(ing.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec}))(t)
	r := must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	if r.Status != photo.Exists || r.Photo == nil || !slices.Equal(r.Photo.Bibs, []string{"1001"}) {
		t.Fatalf("re-post: %s %+v, want exists with the stored photo", r.Status, r.Photo)
	}
	if p, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID); err != nil || !slices.Equal(p.Bibs, []string{"1001"}) {
		t.Fatalf("stored photo: %+v %v, want it kept with [1001]", p, err)
	}
}

// A bib hidden at ingest and escalated to a delete request while the ingest
// runs: the photo (which had it hidden) is deleted.
func TestPrivacyHiddenAtIngestThenDeleteDuringIngest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	for _, batch := range []bool{false, true} {
		bib := map[bool]string{false: "1000", true: "1002"}[batch]
		must(e.privacy.RemoveBib(e.ctx, "o1", "e1", bib, photo.HideMode))(t)
		ing := privacyDuringIngest(t, e, e.store, bib, photo.DeleteMode)
		rec := record(map[bool]int{false: 62, true: 63}[batch], "p1", bib, "1001")
		var r photo.IngestResult
		if batch {
			r = must(ing.IngestBatch(e.ctx, "o1", "e1", []photo.Record{rec}))(t)[0]
		} else {
			r = must(ing.Ingest(e.ctx, "o1", "e1", rec))(t)
		}
		if r.Status != photo.Suppressed {
			t.Fatalf("batch=%v: %s, want suppressed", batch, r.Status)
		}
		if _, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID); !errors.Is(err, photo.ErrNotFound) {
			t.Fatalf("batch=%v: the photo survives the delete request: %v", batch, err)
		}
	}
}

// A hide request after a delete request walks as the delete still in force.
func TestPrivacyHideAfterDeleteStaysADelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(65, "p1", "1000", "1001")
	must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	// The delete request is recorded; its walk did not run.
	if _, err := pgstore.New(e.pool).HideBib(e.ctx, photo.PrivacyRequest{Org: "o1", Event: "e1", Bib: "1000", Mode: photo.DeleteMode}); err != nil {
		t.Fatal(err)
	}
	if res := must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t); res.Changed != 1 || res.Mode != photo.DeleteMode {
		t.Fatalf("hide after delete: %+v, want 1 photo changed and the mode in force, delete", res)
	}
	if _, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID); !errors.Is(err, photo.ErrNotFound) {
		t.Fatalf("photo survives, though the request in force for 1000 is delete: %v", err)
	}
}

// The same requests give the same report whether they landed before or
// during the ingest.
func TestPrivacyReportsDoNotDependOnTiming(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	ing := e.newIngest(photo.IngestConfig{Source: &hookTruth{IngestSource: pgstore.New(e.pool), hook: func() {
		must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1001", photo.HideMode))(t)
		must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.DeleteMode))(t)
	}}})
	during := must(ing.Ingest(e.ctx, "o1", "e1", record(67, "p1", "1000", "1001", "1002", "7777")))(t)
	after := must(e.ingest.Ingest(e.ctx, "o1", "e1", record(68, "p1", "1000", "1001", "1002", "7777")))(t)
	if during.Status != photo.Suppressed || after.Status != photo.Suppressed ||
		!slices.Equal(during.SuppressedBibs, after.SuppressedBibs) || !slices.Equal(during.UnmatchedBibs, after.UnmatchedBibs) {
		t.Fatalf("during: %s suppressed %v unmatched %v; after: %s suppressed %v unmatched %v",
			during.Status, during.SuppressedBibs, during.UnmatchedBibs, after.Status, after.SuppressedBibs, after.UnmatchedBibs)
	}
}
