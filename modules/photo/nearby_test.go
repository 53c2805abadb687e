package photo_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
)

// timed sets up org's event ev for the search by passing time: timing
// points 5k (5000 m) and 10k (10000 m), photographer p1{org} at the 10k
// mat, p2{org} at 7500 m, and bib 1000's
// splits at 5k (base+50 s) and 10k (base+100 s).
func (e *env) timed(org, ev string) {
	e.t.Helper()
	e.org(org, ev, "p1"+org)
	must(e.dir.CreatePhotographer(e.ctx, org, photo.Photographer{ID: "p2" + org, Handle: "h_p2", DisplayName: "Studio p2"}))(e.t)
	if err := e.dir.Assign(e.ctx, org, ev, "p2"+org); err != nil {
		e.t.Fatal(err)
	}
	for _, p := range []photo.TimingPoint{{ID: "5k", EventID: ev, Name: "5 km", DistanceM: 5000}, {ID: "10k", EventID: ev, Name: "10 km", DistanceM: 10000}} {
		must(e.timing.PutTimingPoint(e.ctx, org, p))(e.t)
	}
	must(e.timing.SetPosition(e.ctx, org, photo.Position{EventID: ev, PhotographerID: "p1" + org, PointID: "10k"}))(e.t)
	d := 7500
	must(e.timing.SetPosition(e.ctx, org, photo.Position{EventID: ev, PhotographerID: "p2" + org, DistanceM: &d}))(e.t)
	must(e.timing.ImportSplits(e.ctx, org, ev, []photo.Split{
		{Bib: "1000", PointID: "5k", At: base.Add(50 * time.Second)},
		{Bib: "1000", PointID: "10k", At: base.Add(100 * time.Second)},
	}))(e.t)
}

// post ingests one photo of ph{org} in org's e1 taken at base+i seconds.
func (e *env) post(org, ph string, i int, bibs ...string) string {
	e.t.Helper()
	r := must(e.ingest.Ingest(e.ctx, org, "e1", record(i, ph+org, bibs...)))(e.t)
	return r.Photo.ULID
}

// nearbyIDs is every photo Nearby finds for bib, paged by limit, in order.
func (e *env) nearbyIDs(org, bib string, window time.Duration, limit int) []string {
	e.t.Helper()
	var ids []string
	cursor := ""
	for {
		pg := must(e.search.Nearby(e.ctx, org, "e1", bib, window, photo.PageRequest{Limit: limit, Cursor: cursor}))(e.t)
		for _, p := range pg.Photos {
			ids = append(ids, p.Photo.ULID)
		}
		if cursor = pg.Cursor; cursor == "" {
			return ids
		}
	}
}

// A photo without the bib is found by its time at the camera; one outside
// the window is not; the camera's clock offset moves the match; a
// photographer placed by distance is timed between the splits around them.
func TestNearbyFindsPhotosByPassingTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.timed("o1", "e1")
	// p1 at the 10k mat: the runner is expected at base+100 s.
	before := e.post("o1", "p1", 35)        // 65 s early: outside a 60 s window
	noBib := e.post("o1", "p1", 90, "1003") // 10 s early, another runner's bib
	withBib := e.post("o1", "p1", 100, "1000")
	late := e.post("o1", "p1", 155) // 55 s late
	e.post("o1", "p1", 161)         // 61 s late: outside
	// p2 at 7500 m, halfway from 5k (base+50) to 10k (base+100): base+75.
	mid := e.post("o1", "p2", 76)
	mid2 := e.post("o1", "p2", 105)
	e.post("o1", "p2", 10) // 65 s before p2 expects the runner

	pg := must(e.search.Nearby(e.ctx, "o1", "e1", "1000", time.Minute, photo.PageRequest{}))(t)
	var got []string
	for _, p := range pg.Photos {
		got = append(got, p.Photo.ULID)
		switch p.Photo.ULID {
		case withBib:
			if !p.HasBib {
				t.Error("the photo showing the bib does not say so")
			}
		case noBib:
			if p.HasBib || p.Match.PointID != "10k" || p.Match.PointName != "10 km" || !p.Match.SplitAt.Equal(base.Add(100*time.Second)) {
				t.Errorf("match of the photo without the bib: %+v, hasBib %v", p.Match, p.HasBib)
			}
		case mid:
			if p.Match.PointID != "5k" || !p.Match.ExpectedAt.Equal(base.Add(75*time.Second)) {
				t.Errorf("p2's match %+v, want after 5k, expected at base+75 s", p.Match)
			}
		}
	}
	if want := []string{mid, noBib, withBib, mid2, late}; !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v (earliest first)", got, want)
	}
	if pg.Cursor != "" {
		t.Errorf("cursor %q on the only page", pg.Cursor)
	}
	// p1's camera runs 30 s slow: its photos were taken 30 s later than
	// they say, so base+35 (really +65) is in and comes ahead of p2's
	// base+76, base+90 (+120) is still in but now after p2's base+105, and
	// base+155 (+185) is out.
	if err := e.timing.SetClock(e.ctx, "o1", "p1o1", 30); err != nil {
		t.Fatal(err)
	}
	got = e.nearbyIDs("o1", "1000", time.Minute, 50)
	if want := []string{before, mid, mid2, noBib, withBib}; !slices.Equal(got, want) {
		t.Fatalf("with p1's clock +30 s: found %v, want %v", got, want)
	}
	// A narrow window keeps only what is close.
	if got := e.nearbyIDs("o1", "1000", 5*time.Second, 50); !slices.Equal(got, []string{mid}) {
		t.Fatalf("5 s window: found %v, want only p2's", got)
	}
	for _, w := range []time.Duration{0, photo.MaxWindow + time.Second} {
		if _, err := e.search.Nearby(e.ctx, "o1", "e1", "1000", w, photo.PageRequest{}); !isInvalid(err, "window") {
			t.Errorf("window %v: %v, want invalid naming window", w, err)
		}
	}
	if _, err := e.search.Nearby(e.ctx, "o1", "e1", "10#0", time.Minute, photo.PageRequest{}); !isInvalid(err, "bib") {
		t.Errorf("bad bib: %v", err)
	}
}

// isInvalid reports whether err is a *photo.ValidationError naming field.
func isInvalid(err error, field string) bool {
	var ve *photo.ValidationError
	return errors.As(err, &ve) && len(ve.Problems) > 0 && ve.Problems[0].Field == field
}

// A bib hidden at the runner's request is never found by time, by the
// organizer or in public: the answer is the one a bib without splits gets.
func TestNearbyNeverFindsAHiddenBib(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.timed("o1", "e1")
	published := true
	if _, err := e.dir.UpdateEvent(e.ctx, "o1", "e1", photo.EventPatch{Published: &published}); err != nil {
		t.Fatal(err)
	}
	e.post("o1", "p1", 95)
	e.post("o1", "p1", 100, "1000", "1001")
	if got := e.nearbyIDs("o1", "1000", time.Minute, 50); len(got) != 2 {
		t.Fatalf("before the request: %d photos, want 2", len(got))
	}
	for _, mode := range []string{photo.HideMode, photo.DeleteMode} {
		if _, err := e.privacy.RemoveBib(e.ctx, "o1", "e1", "1000", mode); err != nil {
			t.Fatal(err)
		}
		unknown := must(e.search.Nearby(e.ctx, "o1", "e1", "7777", time.Minute, photo.PageRequest{}))(t)
		for _, pg := range []photo.NearbyPage{
			must(e.search.Nearby(e.ctx, "o1", "e1", "1000", time.Minute, photo.PageRequest{}))(t),
			must(e.search.PublicNearby(e.ctx, "e1", "1000", photo.MaxWindow, photo.PageRequest{}))(t),
		} {
			if len(pg.Photos) != 0 || pg.Cursor != "" || len(unknown.Photos) != 0 || unknown.Cursor != "" {
				t.Fatalf("%s: hidden bib found %d photos (cursor %q); unknown bib %d", mode, len(pg.Photos), pg.Cursor, len(unknown.Photos))
			}
		}
	}
}

// Paging through returns every match exactly once, one Query per
// positioned photographer per page; a tampered cursor, or one of another
// organizer, is refused.
func TestNearbyCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.timed("o1", "e1")
	e.timed("o2", "e2")
	var want []string
	for i := range 6 {
		want = append(want, e.post("o1", "p2", 70+i*2)) // p2: base+70..80
		want = append(want, e.post("o1", "p1", 91+i*3)) // p1: base+91..106
	}
	must(e.ingest.Ingest(e.ctx, "o2", "e2", record(100, "p1o2")))(t)
	slices.Sort(want) // ulids sort by time
	e.ddb.Calls.Reset()
	first := must(e.search.Nearby(e.ctx, "o1", "e1", "1000", time.Minute, photo.PageRequest{Limit: 5}))(t)
	if q, all := e.ddb.Calls.Count("DynamoDB.Query"), e.ddb.Calls.Total(); q != 2 || all != 2 {
		t.Errorf("first page: %s; want one Query per positioned photographer (2)", e.ddb.Calls)
	}
	if got := e.nearbyIDs("o1", "1000", time.Minute, 5); !slices.Equal(got, want) {
		t.Fatalf("paged: %v\nwant %v", got, want)
	}
	if got := e.nearbyIDs("o1", "1000", time.Minute, 1); !slices.Equal(got, want) {
		t.Fatalf("paged by 1: %v\nwant %v", got, want)
	}
	tampered := []byte(first.Cursor)
	tampered[len(tampered)/2] ^= 1
	for name, c := range map[string]string{"tampered": string(tampered), "garbage": "xyz"} {
		if _, err := e.search.Nearby(e.ctx, "o1", "e1", "1000", time.Minute, photo.PageRequest{Limit: 5, Cursor: c}); !errors.Is(err, photo.ErrCursor) {
			t.Errorf("%s cursor: %v, want ErrCursor", name, err)
		}
	}
	if _, err := e.search.Nearby(e.ctx, "o2", "e2", "1000", time.Minute, photo.PageRequest{Limit: 5, Cursor: first.Cursor}); !errors.Is(err, photo.ErrCursor) {
		t.Errorf("another organizer's cursor: %v, want ErrCursor", err)
	}
	// Another window is another query.
	if _, err := e.search.Nearby(e.ctx, "o1", "e1", "1000", 2*time.Minute, photo.PageRequest{Limit: 5, Cursor: first.Cursor}); !errors.Is(err, photo.ErrCursor) {
		t.Errorf("cursor of another window: %v, want ErrCursor", err)
	}
}

// Split imports refuse a bad file whole, naming the row, and a re-import
// writes nothing.
func TestImportSplits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.timed("o1", "e1")
	good := []photo.Split{
		{Bib: "1001", PointID: "5k", At: base.Add(60 * time.Second)},
		{Bib: "1001", PointID: "10k", At: base.Add(130 * time.Second)},
	}
	if n := must(e.timing.ImportSplits(e.ctx, "o1", "e1", good))(t); n != 2 {
		t.Fatalf("import wrote %d, want 2", n)
	}
	if n := must(e.timing.ImportSplits(e.ctx, "o1", "e1", good))(t); n != 0 {
		t.Fatalf("re-import wrote %d, want 0", n)
	}
	bad := []photo.Split{
		{Bib: "1002", PointID: "5k", At: base},
		{Bib: "1002", PointID: "21k", At: base},
	}
	if _, err := e.timing.ImportSplits(e.ctx, "o1", "e1", bad); !isInvalid(err, "splits[1].pointId") {
		t.Fatalf("unknown point: %v", err)
	}
	dup := []photo.Split{{Bib: "1002", PointID: "5k", At: base}, {Bib: "1002", PointID: "5k", At: base}}
	if _, err := e.timing.ImportSplits(e.ctx, "o1", "e1", dup); !isInvalid(err, "splits[1].bib") {
		t.Fatalf("repeated split: %v", err)
	}
	var n int
	if err := e.pool.QueryRow(e.ctx, `SELECT count(*) FROM runner_splits`).Scan(&n); err != nil || n != 4 {
		t.Fatalf("%d splits stored (%v), want the 2 good ones and bib 1000's 2: 4", n, err)
	}
	if _, err := e.timing.ImportSplits(e.ctx, "o2", "e1", good); !errors.Is(err, photo.ErrNotFound) {
		t.Errorf("another organizer's event: %v", err)
	}
}
