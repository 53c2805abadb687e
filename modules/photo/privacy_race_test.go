package photo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/modules/photo/pgstore"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// lostCreateIndex writes the single photo, then reports an error (the
// transaction's answer lost, e.g. a timeout after commit).
type lostCreateIndex struct{ photo.IngestIndex }

func (l lostCreateIndex) Create(ctx context.Context, p *photo.Photo) (photo.WriteResult, error) {
	if _, err := l.IngestIndex.Create(ctx, p); err != nil {
		return photo.WriteResult{}, err
	}
	return photo.WriteResult{}, context.DeadlineExceeded
}

// 1: the single-photo path does not settle when the write errors, though
// the photo may be written; the batch path settles Failed photos.
func TestPrivacyRaceSingleIngestLostAnswerKeepsHiddenBib(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	ing := privacyDuringIngest(t, e, lostCreateIndex{e.store}, "1000", photo.HideMode)
	rec := record(70, "p1", "1000", "1001")
	if _, err := ing.Ingest(e.ctx, "o1", "e1", rec); err == nil {
		t.Fatal("want an error")
	}
	// hide returned 200 and the overlapping ingest returned: invariant says no photo lists 1000.
	p := must(e.search.Photo(e.ctx, "o1", "e1", rec.ULID))(t)
	pg := must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t)
	if slices.Contains(p.Bibs, "1000") || len(pg.Photos) != 0 {
		t.Fatalf("after hide + ingest returned: photo lists %v; bib search for 1000 finds %d", p.Bibs, len(pg.Photos))
	}
}

// Same for delete.
func TestPrivacyRaceSingleIngestLostAnswerSurvivesDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	ing := privacyDuringIngest(t, e, lostCreateIndex{e.store}, "1000", photo.DeleteMode)
	rec := record(71, "p1", "1000", "1001")
	if _, err := ing.Ingest(e.ctx, "o1", "e1", rec); err == nil {
		t.Fatal("want an error")
	}
	if p, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID); err == nil {
		t.Fatalf("after delete request + ingest returned, photo %s survives with bibs %v", p.ULID, p.Bibs)
	}
}

// abaClient runs hook once, just before the first TransactWriteItems that
// touches PHOTO#ulid.
type abaClient struct {
	ddb.Client
	sk   string
	once *sync.Once
	hook func()
}

func (c abaClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, op := range in.TransactItems {
		var sk string
		switch {
		case op.Delete != nil:
			sk = s(op.Delete.Key, "SK")
		case op.Update != nil:
			sk = s(op.Update.Key, "SK")
		}
		if sk == c.sk {
			c.once.Do(c.hook)
		}
	}
	return c.Client.TransactWriteItems(ctx, in, opts...)
}

func abaPrivacy(e *env, ulid string, hook func()) *photo.Privacy {
	c := abaClient{Client: e.ddb.Client, sk: "PHOTO#" + ulid, once: &sync.Once{}, hook: hook}
	db := ddb.New(c, ddb.Config{BatchRetries: 2, BatchBackoff: 1e6, BatchBackoffMax: 2e6, CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")})
	truth := pgstore.New(e.pool)
	return photo.NewPrivacy(photo.PrivacyConfig{Events: truth, Requests: truth, Index: dynamostore.New(db.Table(e.ddb.Table.Name(), &dynamostore.Schema))})
}

// 2: the optimistic check `attribute_not_exists(version)` cannot tell a
// photo from a re-creation of its ulid: a delete request for 1000 deletes a
// photo that never showed 1000.
func TestPrivacyRaceDeleteWalkABA(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(72, "p1", "1000")
	must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	priv := abaPrivacy(e, rec.ULID, func() {
		// Between the walk's read and its write: the organizer deletes the
		// photo and the pipeline re-posts the ulid with another bib.
		must(e.privacy.DeletePhoto(e.ctx, "o1", "e1", rec.ULID))(t)
		r := rec
		r.Bibs = []string{"1001"}
		if res := must(e.ingest.Ingest(e.ctx, "o1", "e1", r))(t); res.Status != photo.Created {
			t.Errorf("re-create: %s", res.Status)
		}
	})
	n := must(priv.RemoveBib(e.ctx, "o1", "e1", "1000", photo.DeleteMode))(t).Changed
	p, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID)
	var left []string
	for _, it := range e.scan() {
		if s(it, "ulid") == rec.ULID {
			left = append(left, s(it, "SK"))
		}
	}
	if err != nil {
		t.Fatalf("delete request for 1000 (changed %d) deleted the photo showing only [1001]: %v; items left %v", n, err, left)
	}
	_ = p
}

// 2b: same for a hide: the update writes bibs computed from the old
// photo onto the re-created one.
func TestPrivacyRaceHideWalkABA(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(73, "p1", "1000", "1002")
	must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	priv := abaPrivacy(e, rec.ULID, func() {
		must(e.privacy.DeletePhoto(e.ctx, "o1", "e1", rec.ULID))(t)
		r := rec
		r.Bibs = []string{"1001"}
		must(e.ingest.Ingest(e.ctx, "o1", "e1", r))(t)
	})
	must(priv.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode))(t)
	p := must(e.search.Photo(e.ctx, "o1", "e1", rec.ULID))(t)
	by1001 := must(e.search.ByBib(e.ctx, "o1", "e1", "1001", photo.PageRequest{}))(t)
	by1002 := must(e.search.ByBib(e.ctx, "o1", "e1", "1002", photo.PageRequest{}))(t)
	if !slices.Equal(p.Bibs, []string{"1001"}) || len(by1001.Photos) != 1 {
		t.Fatalf("re-created photo (posted with [1001]) now lists %v; bib 1001 finds %d, bib 1002 finds %d",
			p.Bibs, len(by1001.Photos), len(by1002.Photos))
	}
}

// Privacy costs no DynamoDB call on the normal path, none for a bib hidden
// before the ingest (prepare applied it), and one GetItem per record for a
// bib under a delete request (is a photo of that ulid stored already?).
func TestPrivacyIngestCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	batch := func(offset int, bibs ...string) string {
		var recs []photo.Record
		for i := range 20 {
			recs = append(recs, record(offset+i, "p1", bibs...))
		}
		e.ddb.Calls.Reset()
		must(e.ingest.IngestBatch(e.ctx, "o1", "e1", recs))(t)
		return e.ddb.Calls.String()
	}
	normal := batch(100, "1003") // 20 index entries, as after a hidden bib is dropped below
	if normal != "DynamoDB.BatchGetItem=1 DynamoDB.BatchWriteItem=1 DynamoDB.PutItem=20" {
		t.Fatalf("batch of 20, no request: %s", normal)
	}
	must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1005", photo.HideMode))(t)
	must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1006", photo.DeleteMode))(t)
	if got := batch(200, "1005", "1007"); got != normal {
		t.Fatalf("batch of 20 with a bib hidden before: %s, want the normal %s", got, normal)
	}
	if got := batch(300, "1006", "1007"); got != "DynamoDB.GetItem=20" {
		t.Fatalf("batch of 20 with a bib under a delete request: %s, want 20 GetItem and nothing written", got)
	}
}

// 4: concurrent ingests (single and batch, re-posts of the same ulids
// with different bibs) while hide and delete requests run.
func TestPrivacyRaceConcurrent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	recs := make([]photo.Record, n)
	for i := range n {
		recs[i] = record(400+i, "p1", "1000", fmt.Sprint(1001+i%3))
	}
	wg.Go(func() {
		for _, r := range recs[:n/2] {
			if _, err := e.ingest.Ingest(e.ctx, "o1", "e1", r); err != nil {
				errs <- fmt.Errorf("single: %w", err)
			}
		}
	})
	wg.Go(func() {
		// re-posts with other bibs
		var rs []photo.Record
		for _, r := range recs {
			r.Bibs = []string{"1000", "1009"}
			rs = append(rs, r)
		}
		if _, err := e.ingest.IngestBatch(e.ctx, "o1", "e1", rs); err != nil {
			errs <- fmt.Errorf("batch: %w", err)
		}
	})
	wg.Go(func() {
		if _, err := e.ingest.IngestBatch(e.ctx, "o1", "e1", recs[n/2:]); err != nil {
			errs <- fmt.Errorf("batch2: %w", err)
		}
	})
	wg.Go(func() {
		if _, err := e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", photo.HideMode); err != nil {
			errs <- fmt.Errorf("hide: %w", err)
		}
		if _, err := e.privacy.RemoveBib(e.ctx, "o1", "e1", "1001", photo.DeleteMode); err != nil {
			errs <- fmt.Errorf("delete: %w", err)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, p := range must(e.search.Gallery(e.ctx, "o1", "e1", photo.PageRequest{}))(t).Photos {
		if slices.Contains(p.Bibs, "1000") || slices.Contains(p.Bibs, "1001") || p.BibCount != len(p.Bibs) {
			t.Errorf("photo %s lists %v (count %d)", p.ULID, p.Bibs, p.BibCount)
		}
	}
	for _, b := range []string{"1000", "1001"} {
		if pg := must(e.search.ByBib(e.ctx, "o1", "e1", b, photo.PageRequest{}))(t); len(pg.Photos) != 0 {
			t.Errorf("bib %s finds %d", b, len(pg.Photos))
		}
	}
	_ = errors.New
}

// 6: ApplyPrivacy returns the photo as first read when its write lost to
// a concurrent walk that already applied the request: the ingest result
// then lists the hidden bib, or reports a deleted photo as created.
func TestPrivacyRaceApplyPrivacyReturnsStalePhoto(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	for i, mode := range []string{photo.HideMode, photo.DeleteMode} {
		bib := fmt.Sprint(1000 + i)
		rec := record(600+i, "p1", bib, "1005")
		c := abaClient{Client: e.ddb.Client, sk: "PHOTO#" + rec.ULID, once: &sync.Once{}, hook: func() {
			// The request's own walk runs now, between settle's read and write.
			must(e.privacy.RemoveBib(e.ctx, "o1", "e1", bib, mode))(t)
		}}
		db := ddb.New(c, ddb.Config{BatchRetries: 2, BatchBackoff: 1e6, BatchBackoffMax: 2e6, CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")})
		// The request is recorded while ingest runs (its walk comes later).
		ing := requestRecordedDuringIngest(t, e, dynamostore.New(db.Table(e.ddb.Table.Name(), &dynamostore.Schema)), bib, mode)
		r := must(ing.Ingest(e.ctx, "o1", "e1", rec))(t)
		stored, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID)
		t.Logf("%s: result %s bibs %v suppressed %v; stored %v err %v", mode, r.Status, bibsOf(r), r.SuppressedBibs, stored, err)
		if r.Photo != nil && slices.Contains(r.Photo.Bibs, bib) {
			t.Errorf("%s: the ingest result's photo lists the requested bib %s: %v", mode, bib, r.Photo.Bibs)
		}
		if err != nil && r.Status != photo.Suppressed {
			t.Errorf("%s: photo deleted, result says %s", mode, r.Status)
		}
	}
}

// 6b: delete variant, on a photo that was updated once (version 1): the
// result reports exists with a photo that the request deleted.
func TestPrivacyRaceApplyPrivacyStaleAfterDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	rec := record(610, "p1", "1001", "1006")
	must(e.ingest.Ingest(e.ctx, "o1", "e1", rec))(t)
	must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1006", photo.HideMode))(t) // version 1
	c := abaClient{Client: e.ddb.Client, sk: "PHOTO#" + rec.ULID, once: &sync.Once{}, hook: func() {
		must(e.privacy.RemoveBib(e.ctx, "o1", "e1", "1001", photo.DeleteMode))(t)
	}}
	db := ddb.New(c, ddb.Config{BatchRetries: 2, BatchBackoff: 1e6, BatchBackoffMax: 2e6, CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")})
	ing := requestRecordedDuringIngest(t, e, dynamostore.New(db.Table(e.ddb.Table.Name(), &dynamostore.Schema)), "1001", photo.DeleteMode)
	rec.Bibs = []string{"1001"}
	r := must(ing.Ingest(e.ctx, "o1", "e1", rec))(t)
	_, err := e.search.Photo(e.ctx, "o1", "e1", rec.ULID)
	t.Logf("result %s bibs %v suppressed %v; stored err %v", r.Status, bibsOf(r), r.SuppressedBibs, err)
	if err != nil && r.Status != photo.Suppressed {
		t.Errorf("photo deleted, result says %s with photo %v", r.Status, bibsOf(r))
	}
}

// bibsOf returns a result's photo's bibs (nil without a photo).
func bibsOf(r photo.IngestResult) []string {
	if r.Photo == nil {
		return nil
	}
	return r.Photo.Bibs
}
