package photoapi

import (
	"strings"
	"testing"

	"github.com/pacerhq/pacer/modules/photo"
)

// The answers the spec used to leave out, driven through the spec-checked
// API (env.api, see spectest): a 409 for an id that exists, the 200 of an
// ingest that wrote nothing (exists, suppressed), and the refusal of a
// null list or an overlong face id, each with the body its schema says.
func TestEveryAnswerIsInTheSpec(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false)
	tok := orgToken(t, "o1")
	admin := token(t, "", "admin")

	e.do("POST", "/admin/organizers", 409, admin, map[string]any{"organizerId": "o1", "name": "Org again"})
	e.do("POST", "/events", 409, tok, map[string]any{"eventId": "e1", "name": "Race again"})
	e.do("POST", "/photographers", 409, tok, map[string]any{"photographerId": "p1", "handle": "h", "displayName": "Again"})

	r := rec(1, "p1", "1000")
	e.do("POST", "/events/e1/photos", 201, tok, r)
	if got := decode[ingestResult](t, body(e.do("POST", "/events/e1/photos", 200, tok, r))); got.Status != "exists" || got.Photo == nil {
		t.Fatalf("re-post: %+v", got)
	}
	e.do("POST", "/events/e1/bibs/1001/privacy", 200, tok, map[string]any{"mode": "delete"})
	if got := decode[ingestResult](t, body(e.do("POST", "/events/e1/photos", 200, tok, rec(2, "p1", "1001")))); got.Status != "suppressed" {
		t.Fatalf("suppressed: %+v", got)
	}

	nulls := rec(3, "p1")
	nulls["bibs"], nulls["faceIds"] = nil, nil
	for _, c := range []struct {
		path  string
		body  any
		field string
	}{
		{"/events/e1/photos", nulls, "body.bibs"},
		{"/events/e1/photos", nulls, "body.faceIds"},
		{"/events/e1/photos/batch", map[string]any{"photos": nil}, "body.photos"},
	} {
		if p := body(e.do("POST", c.path, 422, tok, c.body)); !strings.Contains(p, `"location":"`+c.field+`"`) || !strings.Contains(p, "expected array") {
			t.Errorf("%s with null %s: %s", c.path, c.field, p)
		}
	}
	long := rec(4, "p1")
	long["faceIds"] = []string{strings.Repeat("f", photo.MaxFaceIDLen+1)}
	if p := body(e.do("POST", "/events/e1/photos", 422, tok, long)); !strings.Contains(p, `"location":"body.faceIds[0]"`) {
		t.Errorf("face id of %d characters: %s", photo.MaxFaceIDLen+1, p)
	}
	long["faceIds"] = []string{strings.Repeat("f", photo.MaxFaceIDLen)}
	e.do("POST", "/events/e1/photos", 201, tok, long)

	// The spec states the limits that were checked only by the domain.
	rb := e.raw.OpenAPI().Components.Schemas.Map()["RecordBody"]
	if f := rb.Properties["faceIds"].Items; f.MaxLength == nil || *f.MaxLength != photo.MaxFaceIDLen || f.MinLength == nil || *f.MinLength != 1 {
		t.Errorf("faceIds items: %+v", f)
	}
	for _, name := range []string{"bibs", "faceIds"} {
		if rb.Properties[name].Nullable {
			t.Errorf("%s is required but nullable", name)
		}
	}
	if e.raw.OpenAPI().Components.Schemas.Map()["BatchBody"].Properties["photos"].Nullable {
		t.Error("photos is required but nullable")
	}
}
