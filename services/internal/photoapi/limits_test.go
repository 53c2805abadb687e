package photoapi

import (
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
)

// The reproductions over HTTP: Korean names up to the documented
// maxLength, the documented maximum size, and photos from the future.
func TestDocumentedLimitsHold(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false)
	tok := orgToken(t, "o1")
	hangul := func(n int) string { return strings.Repeat("가", n) }

	// Accepted: each at or within the limit the spec documents.
	e.do("POST", "/events", 201, tok, map[string]any{"eventId": "k70", "name": hangul(70)})
	e.do("POST", "/events", 201, tok, map[string]any{"eventId": "k200", "name": strings.Repeat("👍", 200)})
	e.do("POST", "/photographers", 201, tok, map[string]any{"photographerId": "k50", "handle": hangul(64), "displayName": hangul(50)})
	e.do("POST", "/events/e1/runners", 200, tok, map[string]any{"csv": "bib,name\n7000," + hangul(70) + "\n7001," + strings.Repeat("e\u0301", 100) + "\n"})
	r := rec(1, "p1", "1000")
	r["originalFilename"] = hangul(251) + ".jpg"
	r["size"] = int64(1099511627776)
	got := decode[ingestResult](t, body(e.do("POST", "/events/e1/photos", 201, tok, r)))
	if got.Photo == nil || got.Photo.Size != 1099511627776 || got.Photo.OriginalFilename != hangul(251)+".jpg" {
		t.Fatalf("stored %+v", got.Photo)
	}
	near := rec(2, "p1", "1000")
	near["ulid"] = photo.NewULID(time.Now().Add(time.Minute))
	e.do("POST", "/events/e1/photos", 201, tok, near)

	// Refused, naming the field.
	future := func(k string, v any) map[string]any {
		r := rec(3, "p1", "1000")
		r[k] = v
		return r
	}
	for _, c := range []struct {
		name, path string
		body       map[string]any
		field      string
	}{
		{"201 Hangul event name", "/events", map[string]any{"eventId": "k201", "name": hangul(201)}, "body.name"},
		{"201 Hangul runner in CSV", "/events/e1/runners", map[string]any{"csv": "7002," + hangul(201) + "\n"}, "body.csv"},
		{"size past 1 TiB", "/events/e1/photos", future("size", int64(1099511627777)), "body.size"},
		{"ulid 2 h ahead", "/events/e1/photos", future("ulid", photo.NewULID(time.Now().Add(2*time.Hour))), "body.ulid"},
		{"ulid 12 h ahead", "/events/e1/photos", future("ulid", photo.NewULID(time.Now().Add(12*time.Hour))), "body.ulid"},
		{"createdAt 2 h ahead", "/events/e1/photos", future("createdAt", time.Now().Add(2*time.Hour).UTC().Format(time.RFC3339)), "body.createdAt"},
	} {
		if b := body(e.do("POST", c.path, 422, tok, c.body)); !strings.Contains(b, `"location":"`+c.field+`"`) {
			t.Errorf("%s: problem does not name %s: %s", c.name, c.field, b)
		}
	}
	// The photo at most a minute ahead is the newest; nothing from later
	// hours was stored to sit above it.
	g := decode[struct{ Photos []photo.Photo }](t, body(e.do("GET", "/events/e1/photos", 200, tok)))
	if len(g.Photos) != 2 || g.Photos[0].ULID != near["ulid"] {
		t.Fatalf("gallery: %+v", g.Photos)
	}
}
