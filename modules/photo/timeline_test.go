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

// timeline sets up photographer p1 of o1 in events A, A2 and B (B gets no
// photos) with photos whose times interleave across A and A2, two of them
// in the same millisecond. It returns the photos' ulids newest first.
func (e *env) timeline() []string {
	e.t.Helper()
	e.org("o1", "A", "p1")
	for _, ev := range []string{"A2", "B"} {
		must(e.dir.CreateEvent(e.ctx, "o1", photo.Event{ID: ev, Name: "Race " + ev}))(e.t)
		if err := e.dir.Assign(e.ctx, "o1", ev, "p1"); err != nil {
			e.t.Fatal(err)
		}
	}
	var all []*photo.Photo
	add := func(ev string, offsets ...int) {
		var recs []photo.Record
		for _, o := range offsets {
			recs = append(recs, record(o, "p1"))
		}
		for _, r := range must(e.ingest.IngestBatch(e.ctx, "o1", ev, recs))(e.t) {
			if r.Status != photo.Created {
				e.t.Fatalf("ingest: %s %v", r.Status, r.Err)
			}
			all = append(all, r.Photo)
		}
	}
	// A2's photos are both the newest and among the oldest; A's lie between.
	add("A2", 0, 1, 9, 20, 21, 22, 40)
	add("A", 3, 4, 10, 11, 25, 39)
	// One millisecond, two events: the ulid decides.
	tie := record(30, "p1")
	tie2 := tie
	tie2.ULID = photo.NewULID(base.Add(30 * time.Second))
	for ev, r := range map[string]photo.Record{"A": tie, "A2": tie2} {
		all = append(all, must(e.ingest.Ingest(e.ctx, "o1", ev, r))(e.t).Photo)
	}
	slices.SortFunc(all, func(a, b *photo.Photo) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ULID, a.ULID)
	})
	ids := make([]string, len(all))
	for i, p := range all {
		ids[i] = p.ULID
	}
	return ids
}

// Without an event, a photographer search is one newest-first timeline
// across their events (not grouped by event), across pages, with no
// duplicate, no gap and no empty last page; each page costs one Query per
// event that still has photos (every event on the first).
func TestPhotographerSearchIsOneTimelineAcrossEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := e.timeline()
	eventOf := map[string]string{}
	for _, ev := range []string{"A", "A2"} {
		for _, p := range must(e.search.Gallery(e.ctx, "o1", ev, photo.PageRequest{Limit: 100}))(t).Photos {
			eventOf[p.ULID] = ev
		}
	}
	for _, limit := range []int{1, 3, 5, len(want), 50} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			var got, costs []string
			cursor := ""
			for page := 0; page <= len(want); page++ {
				left := 3 // A, A2 and B on the first page
				if page > 0 {
					left = 0
					for _, ev := range []string{"A", "A2"} {
						for _, id := range want[len(got):] {
							if eventOf[id] == ev {
								left++
								break
							}
						}
					}
				}
				e.ddb.Calls.Reset()
				pg, err := e.search.ByPhotographer(e.ctx, "o1", "p1", "", photo.PageRequest{Limit: limit, Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				if q := e.ddb.Calls.Count("DynamoDB.Query"); q != left || e.ddb.Calls.Total() != left {
					costs = append(costs, fmt.Sprintf("page %d: %s; want %d Query (one per event with photos left)", page, e.ddb.Calls, left))
				}
				if len(pg.Photos) == 0 {
					t.Fatalf("page %d is empty (cursor %q)", page, cursor)
				}
				for _, p := range pg.Photos {
					got = append(got, p.ULID)
				}
				if cursor = pg.Cursor; cursor == "" {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got  %v\nwant %v (newest first across events)", got, want)
			}
			for _, c := range costs {
				t.Error(c)
			}
		})
	}
	// One event still works, with its own cursors.
	var inA []string
	for c := ""; ; {
		pg := must(e.search.ByPhotographer(e.ctx, "o1", "p1", "A", photo.PageRequest{Limit: 2, Cursor: c}))(t)
		for _, p := range pg.Photos {
			inA = append(inA, p.ULID)
		}
		if c = pg.Cursor; c == "" {
			break
		}
	}
	if wantA := slices.DeleteFunc(slices.Clone(want), func(id string) bool { return eventOf[id] != "A" }); !slices.Equal(inA, wantA) {
		t.Fatalf("in A: %v, want %v", inA, wantA)
	}
}

// The gallery, bib search and photographer search agree on newest first:
// createdAt is the ulid's time. A record whose createdAt differs from its
// ulid's time is refused; one without a ulid gets one minted at createdAt.
func TestNewestIsTheULIDTimeEverywhere(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	off := record(1, "p1", "1000")
	off.CreatedAt = off.CreatedAt.Add(time.Hour)
	_, err := e.ingest.Ingest(e.ctx, "o1", "e1", off)
	var ve *photo.ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Field != "createdAt" {
		t.Fatalf("createdAt an hour after the ulid: %v, want a problem naming createdAt", err)
	}
	minted := record(2, "p1", "1000")
	minted.ULID = ""
	res := must(e.ingest.Ingest(e.ctx, "o1", "e1", minted))(t)
	if id := res.Photo.ULID; id[:10] != photo.NewULID(minted.CreatedAt)[:10] || !res.Photo.CreatedAt.Equal(minted.CreatedAt) {
		t.Fatalf("a record without ulid got %s created %s; want a ulid of time %s", id, res.Photo.CreatedAt, minted.CreatedAt)
	}
	e.ingestN("o1", "e1", "p1", 3, 5, func(int) []string { return []string{"1000"} })
	ids := func(pg photo.Page) []string {
		var out []string
		for _, p := range pg.Photos {
			out = append(out, p.ULID)
		}
		return out
	}
	r := photo.PageRequest{Limit: 100}
	gallery := ids(must(e.search.Gallery(e.ctx, "o1", "e1", r))(t))
	byBib := ids(must(e.search.ByBib(e.ctx, "o1", "e1", "1000", r))(t).Page)
	byPh := ids(must(e.search.ByPhotographer(e.ctx, "o1", "p1", "", r))(t))
	if len(gallery) != 6 || !slices.Equal(gallery, byBib) || !slices.Equal(gallery, byPh) {
		t.Fatalf("gallery %v\nbib     %v\nphotog  %v", gallery, byBib, byPh)
	}
}

// A cursor of one photographer's search is refused for another
// photographer, another organizer, or one event's search.
func TestPhotographerCursorIsBoundToItsSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.timeline()
	must(e.dir.CreatePhotographer(e.ctx, "o1", photo.Photographer{ID: "p2", Handle: "h2", DisplayName: "Two"}))(t)
	for _, ev := range []string{"A", "A2", "B"} {
		if err := e.dir.Assign(e.ctx, "o1", ev, "p2"); err != nil {
			t.Fatal(err)
		}
	}
	e.org("o2", "C", "p3") // another organizer's photographer, in as many events
	for _, ev := range []string{"C2", "C3"} {
		must(e.dir.CreateEvent(e.ctx, "o2", photo.Event{ID: ev, Name: "Race " + ev}))(t)
		if err := e.dir.Assign(e.ctx, "o2", ev, "p3"); err != nil {
			t.Fatal(err)
		}
	}
	pg := must(e.search.ByPhotographer(e.ctx, "o1", "p1", "", photo.PageRequest{Limit: 2}))(t)
	if pg.Cursor == "" {
		t.Fatal("no cursor")
	}
	for name, f := range map[string]func() error{
		"another photographer": func() error {
			_, err := e.search.ByPhotographer(e.ctx, "o1", "p2", "", photo.PageRequest{Limit: 2, Cursor: pg.Cursor})
			return err
		},
		"another organizer": func() error {
			_, err := e.search.ByPhotographer(e.ctx, "o2", "p3", "", photo.PageRequest{Limit: 2, Cursor: pg.Cursor})
			return err
		},
		"one event": func() error {
			_, err := e.search.ByPhotographer(e.ctx, "o1", "p1", "A", photo.PageRequest{Limit: 2, Cursor: pg.Cursor})
			return err
		},
	} {
		if err := f(); !errors.Is(err, photo.ErrCursor) {
			t.Errorf("%s: %v, want ErrCursor", name, err)
		}
	}
	if _, err := e.search.ByPhotographer(e.ctx, "o1", "p1", "", photo.PageRequest{Limit: 2, Cursor: pg.Cursor}); err != nil {
		t.Fatalf("the genuine cursor: %v", err)
	}
}
