package photoapi

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/auth"
)

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

type bibResp struct {
	Bib        string         `json:"bib"`
	Matched    bool           `json:"matched"`
	Runner     *photo.Runner  `json:"runner"`
	Photos     []*photo.Photo `json:"photos"`
	NextCursor string         `json:"nextCursor"`
}

func TestOrganizerFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false)
	tok := orgToken(t, "o1")

	r1 := rec(1, "p1", "1000", "5678")
	res := decode[ingestResult](t, body(e.do("POST", "/events/e1/photos", 201, tok, r1)))
	if res.Status != "created" || res.Photo.PhotographerDisplayName != "Studio p1" || !reflect.DeepEqual(res.UnmatchedBibs, []string{"5678"}) {
		t.Fatalf("ingest: %+v", res)
	}
	again := decode[ingestResult](t, body(e.do("POST", "/events/e1/photos", 200, tok, r1)))
	if again.Status != "exists" || again.ULID != r1["ulid"] {
		t.Fatalf("re-post: %+v", again)
	}
	var photos []any
	for i := 2; i < 12; i++ {
		photos = append(photos, rec(i, "p1", "1000"))
	}
	photos = append(photos, r1)
	batch := decode[struct {
		Created, Exists, Failed int
		Results                 []ingestResult
	}](t, body(e.do("POST", "/events/e1/photos/batch", 200, tok, map[string]any{"photos": photos})))
	if batch.Created != 10 || batch.Exists != 1 || batch.Failed != 0 || batch.Results[10].Status != "exists" {
		t.Fatalf("batch: %+v", batch)
	}
	if n := e.items(); n != 11+12 {
		t.Fatalf("%d items, want 11 PHOTO + 12 BIB_INDEX", n)
	}

	// Bib search, paginated.
	var got []string
	cursor := ""
	for {
		p := "/events/e1/bibs/1000/photos?limit=4"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		b := decode[bibResp](t, body(e.do("GET", p, 200, tok)))
		if !b.Matched || b.Runner.Name != "Runner 0" {
			t.Fatalf("runner: %+v", b)
		}
		for _, p := range b.Photos {
			got = append(got, p.ULID)
		}
		if cursor = b.NextCursor; cursor == "" {
			break
		}
	}
	if len(got) != 11 || got[0] <= got[10] {
		t.Fatalf("bib search: %v", got)
	}
	b := decode[bibResp](t, body(e.do("GET", "/events/e1/bibs/5678/photos", 200, tok)))
	if b.Matched || b.Runner != nil || len(b.Photos) != 1 {
		t.Fatalf("unmatched bib: %+v", b)
	}
	ph := decode[struct{ Photos []*photo.Photo }](t, body(e.do("GET", "/photographers/p1/photos?eventId=e1&limit=500", 200, tok)))
	if len(ph.Photos) != 11 {
		t.Fatalf("photographer search: %d", len(ph.Photos))
	}
	gal := decode[struct{ Photos []*photo.Photo }](t, body(e.do("GET", "/events/e1/photos", 200, tok)))
	if len(gal.Photos) != 11 || gal.Photos[0].ULID != got[0] {
		t.Fatalf("gallery: %d", len(gal.Photos))
	}
	e.do("GET", "/events/e1/photos/"+got[3], 200, tok)

	// Rename: the photos follow.
	upd := decode[struct {
		Photographer photo.Photographer
		Sync         photo.SyncReport
	}](t, body(e.do("PATCH", "/photographers/p1", 200, tok, map[string]any{"displayName": "Studio Renamed"})))
	if !upd.Sync.Done || upd.Sync.Updated != 11 || upd.Photographer.Version != 2 {
		t.Fatalf("rename: %+v", upd)
	}
	rr := decode[photo.ReconcileReport](t, body(e.do("POST", "/reconcile", 200, tok)))
	if rr.Drifted != 0 || rr.Scanned != 11 {
		t.Fatalf("reconcile: %+v", rr)
	}

	// Delete one photo, then hide a bib.
	e.do("DELETE", "/events/e1/photos/"+got[0], 200, tok)
	e.do("GET", "/events/e1/photos/"+got[0], 404, tok)
	pr := decode[struct{ Changed int }](t, body(e.do("POST", "/events/e1/bibs/1000/privacy", 200, tok, map[string]any{"mode": "hide"})))
	if pr.Changed != 10 {
		t.Fatalf("hide: %+v", pr)
	}
	if b := decode[bibResp](t, body(e.do("GET", "/events/e1/bibs/1000/photos", 200, tok))); len(b.Photos) != 0 {
		t.Fatalf("hidden bib still found")
	}
}

func TestTenantIsolationOverHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false)
	e.setup("o2", "e2", "p2", false)
	a, b := orgToken(t, "o1"), orgToken(t, "o2")
	var photos []any
	for i := range 6 {
		photos = append(photos, rec(i, "p1", "1000"))
	}
	e.do("POST", "/events/e1/photos/batch", 200, a, map[string]any{"photos": photos})
	e.do("POST", "/events/e2/photos", 201, b, rec(50, "p2", "1000"))
	pa := decode[bibResp](t, body(e.do("GET", "/events/e1/bibs/1000/photos?limit=2", 200, a)))
	secretULID := pa.Photos[0].ULID
	before := e.items()

	for _, c := range []struct{ method, path string }{
		{"GET", "/events/e1"},
		{"GET", "/events/e1/photos"},
		{"GET", "/events/e1/bibs/1000/photos"},
		{"GET", "/events/e1/photos/" + secretULID},
		{"GET", "/photographers/p1/photos"},
		{"GET", "/photographers/p1"},
		{"DELETE", "/events/e1/photos/" + secretULID},
		{"PUT", "/events/e1/photographers/p2"},
		{"GET", "/events/e1/photographers"},
		{"GET", "/events/e1/runners"},
	} {
		r := e.api.Do(c.method, c.path, b)
		if r.Code != 404 || strings.Contains(r.Body.String(), secretULID) || strings.Contains(r.Body.String(), "Runner") {
			t.Errorf("o2 %s %s: %d %s", c.method, c.path, r.Code, r.Body.String())
		}
	}
	for _, c := range []struct {
		path string
		body any
	}{
		{"/events/e1/photos", rec(60, "p2", "1000")},
		{"/events/e1/photos/batch", map[string]any{"photos": []any{rec(61, "p2")}}},
		{"/events/e1/bibs/1000/privacy", map[string]any{"mode": "delete"}},
		{"/photographers/p1/reconcile?repair=true", nil},
		{"/photographers/p1/sync", nil},
		{"/events/e1/runners", map[string]any{"runners": []any{map[string]string{"bib": "1", "name": "x"}}}},
	} {
		args := []any{b}
		if c.body != nil {
			args = append(args, c.body)
		}
		if r := e.api.Do("POST", c.path, args...); r.Code != 404 {
			t.Errorf("o2 POST %s: %d %s", c.path, r.Code, r.Body.String())
		}
	}
	// Using its own event but o1's cursor: 400, and nothing of o1 shows.
	r := e.api.Do("GET", "/events/e2/bibs/1000/photos?cursor="+url.QueryEscape(pa.NextCursor), b)
	if r.Code != 400 || !strings.HasPrefix(r.Header().Get("Content-Type"), "application/problem+json") || strings.Contains(r.Body.String(), secretULID) {
		t.Errorf("o1's cursor in o2: %d %s", r.Code, r.Body.String())
	}
	// A photographer search's cursor (one position per event) of o1 in
	// o2's own photographer search: 400 too.
	pp := decode[bibResp](t, body(e.do("GET", "/photographers/p1/photos?limit=2", 200, a)))
	r = e.api.Do("GET", "/photographers/p2/photos?cursor="+url.QueryEscape(pp.NextCursor), b)
	if pp.NextCursor == "" || r.Code != 400 || !strings.HasPrefix(r.Header().Get("Content-Type"), "application/problem+json") || strings.Contains(r.Body.String(), secretULID) {
		t.Errorf("o1's photographer cursor in o2: %d %s", r.Code, r.Body.String())
	}
	if n := e.items(); n != before {
		t.Fatalf("cross-tenant attempts changed the table: %d → %d items", before, n)
	}
	if n := len(decode[bibResp](t, body(e.do("GET", "/events/e1/bibs/1000/photos", 200, a))).Photos); n != 6 {
		t.Fatalf("o1 has %d photos", n)
	}
}

func TestPublicSearchOnlyForPublishedEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "open", "p1", true)
	tok := orgToken(t, "o1")
	e.do("POST", "/events", 201, tok, map[string]any{"eventId": "closed", "name": "Closed"})
	e.do("PUT", "/events/closed/photographers/p1", 204, tok)
	e.do("POST", "/events/open/photos", 201, tok, rec(1, "p1", "1000"))
	e.do("POST", "/events/closed/photos", 201, tok, rec(2, "p1", "1000"))
	pub := body(e.do("GET", "/public/events/open/bibs/1000/photos", 200))
	if b := decode[bibResp](t, pub); len(b.Photos) != 1 || b.Photos[0].S3URI == "" {
		t.Fatalf("public search: %+v", b)
	}
	// Anyone may call it: it must not turn a bib into the runner's name, nor
	// hand out face ids or the raw upload's key.
	for _, private := range []string{"Runner 0", "faceIds", "rawKey", "face-"} {
		if strings.Contains(pub, private) {
			t.Fatalf("public search leaks %q: %s", private, pub)
		}
	}
	e.do("GET", "/public/events/closed/bibs/1000/photos", 404)
	e.do("PATCH", "/events/closed", 200, tok, map[string]any{"published": true})
	e.do("GET", "/public/events/closed/bibs/1000/photos", 200)
}

func TestHostileInputIsRejectedAndWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false)
	tok := orgToken(t, "o1")
	tokB := orgToken(t, "o2")
	e.do("POST", "/photographers", 201, tok, map[string]any{"photographerId": "p9", "handle": "h9", "displayName": "Nine"})
	with := func(k string, v any) map[string]any {
		r := rec(7, "p1", "1000")
		r[k] = v
		return r
	}
	without := func(k string) map[string]any {
		r := rec(7, "p1", "1000")
		delete(r, k)
		return r
	}
	var tooMany []any
	for i := range photo.MaxBatch + 1 {
		tooMany = append(tooMany, rec(100+i, "p1"))
	}
	expired, _ := auth.Mint(secret, auth.Principal{UserID: "u", Roles: []string{auth.RoleOrganizer}, OrgID: "o1"}, -2*3600e9)
	forged, _ := auth.Mint([]byte("another-secret-that-is-32-bytes-long!!"), auth.Principal{UserID: "u", Roles: []string{auth.RoleOrganizer}, OrgID: "o1"}, 3600e9)
	huge := strings.Repeat("x", 3<<20)
	for _, c := range []struct {
		name         string
		method, path string
		args         []any
		status       int
		field        string // an error detail's location, when one is expected
	}{
		{"event id with #", "POST", "/events/e%231/photos", []any{tok, rec(1, "p1")}, 422, "path.eventId"},
		{"event id with %", "GET", "/events/e%251/photos", []any{tok}, 422, "path.eventId"},
		{"event id with control char", "GET", "/events/e%001/photos", []any{tok}, 422, "path.eventId"},
		{"event id too long", "GET", "/events/" + strings.Repeat("e", 65) + "/photos", []any{tok}, 422, "path.eventId"},
		{"bib with #", "GET", "/events/e1/bibs/12%2334/photos", []any{tok}, 422, "path.bib"},
		{"photo id not a ulid", "GET", "/events/e1/photos/abc", []any{tok}, 422, "path.ulid"},
		{"bib in body with #", "POST", "/events/e1/photos", []any{tok, rec(1, "p1", "12#34")}, 422, "body.bibs[0]"},
		{"bib in body with control char", "POST", "/events/e1/photos", []any{tok, rec(1, "p1", "12\n34")}, 422, "body.bibs[0]"},
		{"filename with control char", "POST", "/events/e1/photos", []any{tok, with("originalFilename", "a\u0007b")}, 422, "body.originalFilename"},
		{"photographer id with #", "POST", "/events/e1/photos", []any{tok, with("photographerId", "p#1")}, 422, "body.photographerId"},
		{"unknown photographer", "POST", "/events/e1/photos", []any{tok, with("photographerId", "ghost")}, 422, "body.photographerId"},
		{"unassigned photographer", "POST", "/events/e1/photos", []any{tok, with("photographerId", "p9")}, 422, "body.photographerId"},
		{"unassigned photographer in batch", "POST", "/events/e1/photos/batch", []any{tok, map[string]any{"photos": []any{rec(1, "p1"), with("photographerId", "p9")}}}, 422, "body.photos[1].photographerId"},
		{"missing field", "POST", "/events/e1/photos", []any{tok, without("s3Uri")}, 422, "required property s3Uri"},
		{"unknown field", "POST", "/events/e1/photos", []any{tok, with("orgId", "o2")}, 422, "body.orgId"},
		{"bad ulid", "POST", "/events/e1/photos", []any{tok, with("ulid", "01HXY8FWZM5KJQD9K3Y6R8NZT#")}, 422, "body.ulid"},
		{"too many bibs", "POST", "/events/e1/photos", []any{tok, with("bibs", strings.Split(strings.Repeat("1,", 51), ",")[:51])}, 422, "body.bibs"},
		{"oversized batch", "POST", "/events/e1/photos/batch", []any{tok, map[string]any{"photos": tooMany}}, 422, "body.photos"},
		{"malformed JSON", "POST", "/events/e1/photos", []any{tok, strings.NewReader(`{"ulid": `)}, 400, ""},
		{"body too large", "POST", "/events/e1/photos", []any{tok, strings.NewReader(`{"originalFilename":"` + huge + `"}`)}, 413, ""},
		{"limit out of range", "GET", "/events/e1/photos?limit=501", []any{tok}, 422, "query.limit"},
		{"tampered cursor", "GET", "/events/e1/photos?cursor=eyJ2IjoxfQ.AAAA", []any{tok}, 400, "query.cursor"},
		{"tampered photographer cursor", "GET", "/photographers/p1/photos?cursor=" + strings.Repeat("A", 5000), []any{tok}, 400, "query.cursor"},
		{"createdAt not the ulid's time", "POST", "/events/e1/photos", []any{tok, with("createdAt", "2024-01-01T00:00:00Z")}, 422, "body.createdAt"},
		{"no token", "POST", "/events/e1/photos", []any{rec(1, "p1")}, 401, ""},
		{"expired token", "POST", "/events/e1/photos", []any{"Authorization: Bearer " + expired, rec(1, "p1")}, 401, ""},
		{"forged token", "POST", "/events/e1/photos", []any{"Authorization: Bearer " + forged, rec(1, "p1")}, 401, ""},
		{"dev header outside dev mode", "POST", "/events/e1/photos", []any{"X-Pacer-Dev-User: eve", "X-Pacer-Dev-Roles: organizer", "X-Pacer-Dev-Org: o1", rec(1, "p1")}, 401, ""},
		{"no organizer role", "POST", "/events/e1/photos", []any{token(t, "o1"), rec(1, "p1")}, 403, ""},
		{"organizer without org", "POST", "/events/e1/photos", []any{token(t, "", auth.RoleOrganizer), rec(1, "p1")}, 403, ""},
		{"admin only", "POST", "/admin/organizers", []any{tok, map[string]any{"organizerId": "x", "name": "x"}}, 403, ""},
		{"other org's event", "POST", "/events/e1/photos", []any{tokB, rec(1, "")}, 404, ""},
		{"bad privacy mode", "POST", "/events/e1/bibs/1000/privacy", []any{tok, map[string]any{"mode": "erase"}}, 422, "body.mode"},
		{"bad runner csv", "POST", "/events/e1/runners", []any{tok, map[string]any{"csv": "bib,name\n12#3,Eve\n"}}, 422, `"line 2: bib must match`},
		{"bad runner csv names the csv", "POST", "/events/e1/runners", []any{tok, map[string]any{"csv": "1,Ann\n2,Bo\u0007b\n"}}, 422, "body.csv"},
		{"runners after NUL", "GET", "/events/e1/runners?after=%00", []any{tok}, 422, "query.after"},
		{"runners after not UTF-8", "GET", "/events/e1/runners?after=%ff", []any{tok}, 422, "query.after"},
		{"empty photographer patch", "PATCH", "/photographers/p1", []any{tok, map[string]any{}}, 422, "body"},
		{"null photographer patch", "PATCH", "/photographers/p1", []any{tok, map[string]any{"handle": nil}}, 422, "body"},
		{"size beyond int64", "POST", "/events/e1/photos", []any{tok, with("size", json.Number("9223372036854775808"))}, 422, "body.size"},
		{"ulid from before 2000", "POST", "/events/e1/photos", []any{tok, with("ulid", "00000000000000000000000001")}, 422, "body.ulid"},
		{"event date in year 0", "POST", "/events", []any{tok, map[string]any{"eventId": "y0", "name": "Y", "startsOn": "0000-01-01"}}, 422, "body.startsOn"},
		{"createdAt in year 1", "POST", "/events/e1/photos", []any{tok, with("createdAt", "0001-01-01T00:00:00Z")}, 422, "body.createdAt"},
		{"ulid from year 10889 with a createdAt", "POST", "/events/e1/photos", []any{tok, func() map[string]any {
			r := with("ulid", "7ZZZZZZZZZZZZZZZZZZZZZZZZY")
			r["createdAt"] = "2024-01-01T00:00:00Z"
			return r
		}()}, 422, "body.ulid"},
		{"width written 1e3", "POST", "/events/e1/photos", []any{tok, with("dimensions", map[string]any{"width": json.Number("1e3"), "height": 1})}, 422, "body.dimensions.width"},
		{"batch size written 1e3", "POST", "/events/e1/photos/batch", []any{tok, map[string]any{"photos": []any{rec(8, "p1", "1000"), with("size", json.Number("1e3"))}}}, 422, `"body.photos[1].size"`},
		{"blank event name", "POST", "/events", []any{tok, map[string]any{"eventId": "b1", "name": "   "}}, 422, "body.name"},
		{"invisible event name", "POST", "/events", []any{tok, map[string]any{"eventId": "b2", "name": "\u200b\ufeff\u3164"}}, 422, "body.name"},
		{"duplicate key", "POST", "/events", []any{tok, strings.NewReader(`{"eventId":"d1","name":"D","eventId":"d2"}`)}, 400, "body.eventId"},
		{"name not UTF-8", "POST", "/events", []any{tok, strings.NewReader("{\"eventId\":\"u8\",\"name\":\"\xff\xfe\"}")}, 400, "not valid UTF-8"},
		{"organizer missing from the database", "POST", "/events", []any{orgToken(t, "ghost"), map[string]any{"eventId": "g1", "name": "G"}}, 404, "organizer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.api.Do(c.method, c.path, c.args...)
			if r.Code != c.status {
				t.Fatalf("%d, want %d: %s", r.Code, c.status, r.Body.String())
			}
			if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
				t.Fatalf("content type %q", ct)
			}
			if c.field != "" && !strings.Contains(r.Body.String(), c.field) {
				t.Fatalf("problem does not name %s: %s", c.field, r.Body.String())
			}
			for _, internal := range []string{"fkey", "pgstore", "dynamostore", "ddb:", "SQLSTATE"} {
				if strings.Contains(r.Body.String(), internal) {
					t.Fatalf("problem leaks internals (%s): %s", internal, r.Body.String())
				}
			}
		})
	}
	if n := e.items(); n != 0 {
		t.Fatalf("hostile input wrote %d items", n)
	}
	for _, id := range []string{"d1", "d2", "u8", "b1", "b2"} {
		e.do("GET", "/events/"+id, 404, tok)
	}
	if p := decode[photo.Photographer](t, body(e.do("GET", "/photographers/p1", 200, tok))); p.Version != 1 {
		t.Fatalf("rejected patches changed the photographer: version %d", p.Version)
	}
	if rs := decode[struct{ Runners []photo.Runner }](t, body(e.do("GET", "/events/e1/runners?after=1009", 200, tok))); len(rs.Runners) != 0 {
		t.Fatalf("rejected imports wrote runners: %+v", rs.Runners)
	}
}

func TestRunnerCSVFromASpreadsheet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false)
	tok := orgToken(t, "o1")
	// Excel writes a UTF-8 byte order mark and CRLF line ends.
	csv := "\ufeffBib,Name\r\n2001,Kim Minsu\r\n2002,\"Lee, Jiyeon\"\r\n"
	imp := decode[struct{ Received, Written int }](t, body(e.do("POST", "/events/e1/runners", 200, tok, map[string]any{"csv": csv})))
	if imp.Received != 2 || imp.Written != 2 {
		t.Fatalf("import: %+v", imp)
	}
	rs := decode[struct{ Runners []photo.Runner }](t, body(e.do("GET", "/events/e1/runners?after=2000", 200, tok)))
	if len(rs.Runners) != 2 || rs.Runners[1].Name != "Lee, Jiyeon" {
		t.Fatalf("runners: %+v", rs.Runners)
	}
}

func TestOpenAPISpecIsUpToDate(t *testing.T) {
	var b strings.Builder
	if err := WriteOpenAPI(&b); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../../../openapi/photo.yaml")
	if err != nil {
		t.Fatalf("%v (run `make openapi`)", err)
	}
	if string(committed) != b.String() {
		t.Fatal("openapi/photo.yaml is stale: run `make openapi` and commit it")
	}
}

func TestParameterPatternsMatchTheDomain(t *testing.T) {
	for _, c := range []struct {
		v     any
		field string
		want  string
	}{
		{EventPath{}, "EventID", photo.IDPattern},
		{PhotographerPath{}, "PhotographerID", photo.IDPattern},
		{BibPath{}, "Bib", photo.BibPattern},
		{ULIDPath{}, "ULID", photo.ULIDPattern},
		{recordBody{}, "ULID", photo.ULIDPattern},
		{recordBody{}, "PhotographerID", photo.IDPattern},
		{eventBody{}, "EventID", photo.IDPattern},
		{photographerBody{}, "PhotographerID", photo.IDPattern},
		{organizerBody{}, "OrganizerID", photo.IDPattern},
		{runnerBody{}, "Bib", photo.BibPattern},
		{PointPath{}, "PointID", photo.IDPattern},
		{positionBody{}, "PointID", photo.IDPattern},
		{splitBody{}, "Bib", photo.BibPattern},
		{splitBody{}, "PointID", photo.IDPattern},
	} {
		f, _ := reflect.TypeOf(c.v).FieldByName(c.field)
		if got := f.Tag.Get("pattern"); got != c.want {
			t.Errorf("%T.%s pattern %q, want %q", c.v, c.field, got, c.want)
		}
	}
	// The timing bounds the tags state are the domain's.
	for _, c := range []struct {
		v           any
		field       string
		lo, hi, def string // def "" has no default
	}{
		{NearbyQuery{}, "Window", "1", fmt.Sprint(int(photo.MaxWindow / time.Second)), fmt.Sprint(int(photo.DefaultWindow / time.Second))},
		{clockBody{}, "OffsetSeconds", fmt.Sprint(-photo.MaxOffsetSeconds), fmt.Sprint(photo.MaxOffsetSeconds), ""},
		{positionBody{}, "OffsetSeconds", fmt.Sprint(-photo.MaxOffsetSeconds), fmt.Sprint(photo.MaxOffsetSeconds), ""},
		{positionBody{}, "DistanceM", "0", fmt.Sprint(photo.MaxDistanceM), ""},
		{timingPointBody{}, "DistanceM", "0", fmt.Sprint(photo.MaxDistanceM), ""},
	} {
		f, _ := reflect.TypeOf(c.v).FieldByName(c.field)
		if lo, hi := f.Tag.Get("minimum"), f.Tag.Get("maximum"); lo != c.lo || hi != c.hi {
			t.Errorf("%T.%s bounds %s..%s, want %s..%s", c.v, c.field, lo, hi, c.lo, c.hi)
		}
		if d := f.Tag.Get("default"); d != c.def {
			t.Errorf("%T.%s default %q, want %q", c.v, c.field, d, c.def)
		}
	}
}

// A listing whose size is a multiple of the page size ends on its last full
// page: no nextAfter there, so no trailing empty page.
func TestRunnerListingEndsOnTheLastFullPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false) // runners 1000..1009
	tok := orgToken(t, "o1")
	type page struct {
		Runners   []photo.Runner
		NextAfter string
	}
	var bibs []string
	after, pages := "", 0
	for {
		p := decode[page](t, body(e.do("GET", "/events/e1/runners?limit=5&after="+after, 200, tok)))
		pages++
		if len(p.Runners) == 0 {
			t.Fatalf("page %d is empty", pages)
		}
		for _, r := range p.Runners {
			bibs = append(bibs, r.Bib)
		}
		if after = p.NextAfter; after == "" {
			break
		}
		if after != bibs[len(bibs)-1] {
			t.Fatalf("nextAfter %q, want the page's last bib %q", after, bibs[len(bibs)-1])
		}
	}
	if pages != 2 || len(bibs) != 10 || bibs[0] != "1000" || bibs[9] != "1009" {
		t.Fatalf("%d pages, bibs %v; want 2 pages of 1000..1009", pages, bibs)
	}
	if p := decode[page](t, body(e.do("GET", "/events/e1/runners?limit=1000&after=1008", 200, tok))); len(p.Runners) != 1 || p.NextAfter != "" {
		t.Fatalf("last page: %+v", p)
	}
}
