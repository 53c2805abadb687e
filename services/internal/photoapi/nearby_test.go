package photoapi

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

type nearbyResp struct {
	Bib    string
	Photos []struct {
		Photo struct {
			ULID string
			Bibs []string
		}
		Match struct {
			PointID string
		}
		HasBib bool
	}
	NextCursor string
}

// timing sets up event's race timing over HTTP: a 10k timing point, ph at
// it 10 s after the mat, and bib 1000's split there at at+100 s.
func (e *env) timing(tok, event, ph string) {
	e.t.Helper()
	e.do("PUT", "/events/"+event+"/timing-points/10k", 200, tok, map[string]any{"name": "10 km", "distanceM": 10000})
	e.do("PUT", "/events/"+event+"/photographers/"+ph+"/position", 200, tok, map[string]any{"pointId": "10k", "offsetSeconds": 10})
	e.do("POST", "/events/"+event+"/splits", 200, tok, map[string]any{"csv": "bib,pointId,time\n1000,10k,2024-11-09T10:31:40Z\n"})
}

// newTimedEnv sets up two organizers, o1 (e1, p1) and o2 (e2, p2), both
// events published, and e1's race timing; it returns their tokens.
func newTimedEnv(t *testing.T) (e *env, tok1, tok2 string) {
	e = newEnv(t)
	e.setup("o1", "e1", "p1", true)
	e.setup("o2", "e2", "p2", true)
	tok1, tok2 = orgToken(t, "o1"), orgToken(t, "o2")
	e.timing(tok1, "e1", "p1")
	return e, tok1, tok2
}

// The search by passing time over HTTP: the split import (a bad line
// writes nothing and is named, a re-import writes nothing), a photo
// without the bib found in public, bad input refused naming the field, and
// a hidden bib answered as an unknown one.
func TestNearbyOverHTTP(t *testing.T) {
	t.Parallel()
	e, tok, tok2 := newTimedEnv(t)
	e.timing(tok2, "e2", "p2")

	bad := "bib,pointId,time\n1001,10k,2024-11-09T10:32:00Z\n1002,21k,2024-11-09T10:32:05Z\n"
	r := body(e.do("POST", "/events/e1/splits", 422, tok, map[string]any{"csv": bad}))
	if !strings.Contains(r, `"line 3: pointId is not a timing point of the event"`) || !strings.Contains(r, "body.csv") {
		t.Fatalf("bad split file: %s", r)
	}
	// Every bad line is named, bad times among the rest.
	r = body(e.do("POST", "/events/e1/splits", 422, tok, map[string]any{"csv": "1001,10k,half past ten\n1002,nope,2024-11-09T10:32:05Z\nbad bib,10k,2024-11-09T10:32:05Z\n1003,10k,2024-11-09T10:32:05\n"}))
	for _, want := range []string{"line 1: at must be an RFC 3339 time", "line 2: pointId is not a timing point", "line 3: bib", "line 4: at must be an RFC 3339 time"} {
		if !strings.Contains(r, want) {
			t.Errorf("bad lines: %s, want it to say %q", r, want)
		}
	}
	good := "bib,pointId,time\n1001,10k,2024-11-09T10:32:00Z\n1002,10k,2024-11-09T10:32:05Z\n"
	for want, n := range []int{2, 0} { // nothing of the bad files was written; a re-import writes nothing
		imp := decode[struct{ Received, Written int }](t, body(e.do("POST", "/events/e1/splits", 200, tok, map[string]any{"csv": good})))
		if imp.Received != 2 || imp.Written != n {
			t.Fatalf("import #%d: %+v, want written %d", want+1, imp, n)
		}
	}

	// The runner is expected at the camera at 10:31:50.
	var want []string
	for i, bibs := range [][]string{nil, {"1000"}, {"1005"}} {
		ph := rec(105+i*5, "p1", bibs...)
		e.do("POST", "/events/e1/photos", 201, tok, ph)
		want = append(want, ph["ulid"].(string))
	}
	// 28 s after the expected time: found only because the camera stands
	// 10 s past the mat.
	late := rec(138, "p1")
	e.do("POST", "/events/e1/photos", 201, tok, late)
	want = append(want, late["ulid"].(string))
	e.do("POST", "/events/e1/photos", 201, tok, rec(300, "p1")) // far from it
	var got []string
	path := "/public/events/e1/bibs/1000/nearby-photos?window=30&limit=2"
	cursor := ""
	for page := 0; ; page++ {
		p := path
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		res := decode[nearbyResp](t, body(e.do("GET", p, 200)))
		for _, ph := range res.Photos {
			got = append(got, ph.Photo.ULID)
			if ph.Match.PointID != "10k" || ph.HasBib != (len(ph.Photo.Bibs) == 1 && ph.Photo.Bibs[0] == "1000") {
				t.Errorf("photo %s: %+v", ph.Photo.ULID, ph)
			}
		}
		if page == 0 {
			cursor = res.NextCursor
			// Another organizer's, or a tampered, cursor: 400 naming it.
			for _, c := range []string{cursor, cursor[:len(cursor)-2] + "AA"} {
				r := body(e.do("GET", "/public/events/e2/bibs/1000/nearby-photos?window=30&limit=2&cursor="+url.QueryEscape(c), 400))
				if !strings.Contains(r, "query.cursor") {
					t.Fatalf("foreign cursor: %s", r)
				}
			}
			e.do("GET", "/events/e1/bibs/1000/nearby-photos?window=30&limit=2&cursor="+url.QueryEscape(cursor[:len(cursor)-2]+"AA"), 400, tok)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	// The organizer's search finds the same, with the whole photo.
	org := body(e.do("GET", "/events/e1/bibs/1000/nearby-photos?window=30", 200, tok))
	if o := decode[nearbyResp](t, org); len(o.Photos) != 4 || !strings.Contains(org, "rawKey") {
		t.Fatalf("organizer search: %s", org)
	}
	e.do("GET", "/events/e1/bibs/1000/nearby-photos", 404, tok2)

	for _, q := range []string{"window=0", "window=601", "window=x"} {
		if r := body(e.do("GET", "/public/events/e1/bibs/1000/nearby-photos?"+q, 422)); !strings.Contains(r, "query.window") {
			t.Errorf("%s: %s", q, r)
		}
	}
	if r := body(e.do("GET", "/public/events/e1/bibs/10%2300/nearby-photos", 422)); !strings.Contains(r, "path.bib") {
		t.Errorf("bad bib: %s", r)
	}

	// Hidden at the runner's request: the answer an unknown bib gets.
	e.do("POST", "/events/e1/bibs/1000/privacy", 200, tok, map[string]any{"mode": "hide"})
	hidden := body(e.do("GET", "/public/events/e1/bibs/1000/nearby-photos?window=600", 200))
	unknown := body(e.do("GET", "/public/events/e1/bibs/7777/nearby-photos?window=600", 200))
	if strings.Replace(hidden, "1000", "7777", 1) != unknown {
		t.Fatalf("hidden bib: %s\nunknown bib: %s", hidden, unknown)
	}
	if o := decode[nearbyResp](t, body(e.do("GET", "/events/e1/bibs/1000/nearby-photos?window=600", 200, tok))); len(o.Photos) != 0 {
		t.Fatalf("the organizer finds a hidden bib: %+v", o)
	}
}

// The timing routes act on the caller's organizer only, and refuse a
// position that is neither or both kinds.
func TestTimingRoutesStayInTheirOrganizer(t *testing.T) {
	t.Parallel()
	e, tok, tok2 := newTimedEnv(t)
	e.do("PUT", "/events/e1/timing-points/5k", 404, tok2, map[string]any{"name": "5 km", "distanceM": 5000})
	// Nor may it replace one that exists (an upsert that found the row).
	e.do("PUT", "/events/e1/timing-points/10k", 404, tok2, map[string]any{"name": "Claim a prize", "distanceM": 40000})
	if pts := body(e.do("GET", "/events/e1/timing-points", 200, tok)); strings.Contains(pts, "Claim a prize") || strings.Contains(pts, "40000") {
		t.Errorf("another organizer replaced a timing point: %s", pts)
	}
	e.do("GET", "/events/e1/timing-points", 404, tok2)
	e.do("GET", "/events/e1/positions", 404, tok2)
	e.do("PUT", "/events/e1/photographers/p1/position", 404, tok2, map[string]any{"pointId": "10k"})
	e.do("PUT", "/events/e2/photographers/p2/position", 422, tok2, map[string]any{"pointId": "10k"}) // e1's point: not one of e2's
	e.do("PUT", "/photographers/p1/clock", 404, tok2, map[string]any{"offsetSeconds": 5})
	e.do("POST", "/events/e1/splits", 404, tok2, map[string]any{"csv": "1000,10k,2024-11-09T10:31:40Z\n"})
	for _, b := range []map[string]any{{}, {"pointId": "10k", "distanceM": 100}, {"distanceM": 100, "offsetSeconds": 5}} {
		if r := body(e.do("PUT", "/events/e1/photographers/p1/position", 422, tok, b)); !strings.Contains(r, "body.") {
			t.Errorf("%v: %s", b, r)
		}
	}
	// A name shown publicly (match.pointName) cannot reorder the text
	// around it.
	if r := body(e.do("PUT", "/events/e1/timing-points/bidi", 422, tok, map[string]any{"name": "abc\u202edef", "distanceM": 5})); !strings.Contains(r, "body.name") {
		t.Errorf("a point name with a bidirectional override: %s, want a problem naming body.name", r)
	}
	if r := body(e.do("PUT", "/events/e1/photographers/p1/position", 422, tok, map[string]any{"pointId": "nope"})); !strings.Contains(r, "body.pointId") {
		t.Errorf("a position at a point the event lacks: %s, want a problem naming body.pointId", r)
	}
	e.do("PUT", "/photographers/p1/clock", 200, tok, map[string]any{"offsetSeconds": -12})
	ps := decode[struct {
		Positions []struct {
			PointID            string
			ClockOffsetSeconds int
		}
	}](t, body(e.do("GET", "/events/e1/positions", 200, tok)))
	if len(ps.Positions) != 1 || ps.Positions[0].PointID != "10k" || ps.Positions[0].ClockOffsetSeconds != -12 {
		t.Fatalf("positions %+v", ps)
	}
}
