package photoapi

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/server"
)

// Domain errors answer with their problem type, a stable URI the spec
// lists; errors that mean no more than their status keep about:blank.
func TestDomainErrorsHaveProblemTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.setup("o1", "e1", "p1", false)
	tok := orgToken(t, "o1")
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		typ, location      string
	}{
		{"unknown event", "GET", "/events/nope", nil, http.StatusNotFound, "not-found", ""},
		{"existing event", "POST", "/events", map[string]any{"eventId": "e1", "name": "Race"}, http.StatusConflict, "conflict", ""},
		{"bad cursor", "GET", "/events/e1/photos?cursor=garbage", nil, http.StatusBadRequest, "invalid-cursor", "query.cursor"},
		{"domain validation", "POST", "/events/e1/runners", map[string]any{"runners": []any{}}, http.StatusUnprocessableEntity, "invalid-input", "body.runners"},
		{"schema validation", "GET", "/events/e1/photos?limit=0", nil, http.StatusUnprocessableEntity, "", "query.limit"},
	} {
		args := []any{tok}
		if c.body != nil {
			args = append(args, c.body)
		}
		m := decode[huma.ErrorModel](t, body(e.do(c.method, c.path, c.status, args...)))
		want := ""
		if c.typ != "" {
			want = server.ProblemBase + c.typ
		}
		if m.Type != want || (c.location != "" && (len(m.Errors) == 0 || m.Errors[0].Location != c.location)) {
			t.Errorf("%s: type %q, want %q; errors %+v, want at %s", c.name, m.Type, want, m.Errors, c.location)
		}
	}
	var spec bytes.Buffer
	if err := WriteOpenAPI(&spec); err != nil {
		t.Fatal(err)
	}
	for _, pt := range problemTypes {
		if !strings.Contains(spec.String(), "`"+server.ProblemBase+pt.Name+"`") {
			t.Errorf("the spec does not list the problem type %s", pt.Name)
		}
	}
}
