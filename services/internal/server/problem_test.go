package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/pacerhq/pacer/services/internal/server"
)

// A problem response does not echo a huge offending value back whole.
func TestProblemClipsEchoedValues(t *testing.T) {
	api := humatest.Wrap(t, server.NewAPI(http.NewServeMux(), "t", "1", "", "http://127.0.0.1:8080", false))
	huma.Register(api, huma.Operation{OperationID: "echo", Method: http.MethodPost, Path: "/echo"},
		func(ctx context.Context, in *struct {
			Body struct {
				Name string   `json:"name" maxLength:"10"`
				Tags []string `json:"tags" maxItems:"2"`
			}
		}) (*struct{}, error) {
			return nil, nil
		})
	long := strings.Repeat("é", 5000)
	tags := `["` + strings.Repeat(`a","`, 999) + `a"]`
	resp := api.Post("/echo", strings.NewReader(`{"name":"`+long+`","tags":`+tags+`}`))
	body := resp.Body.String()
	if resp.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d: %.300s", resp.Code, body)
	}
	if len(body) > 2000 {
		t.Fatalf("problem response is %d bytes: the value was echoed whole", len(body))
	}
	for _, want := range []string{"body.name", "body.tags", "(10000 bytes)", "(1000 items)"} {
		if !strings.Contains(body, want) {
			t.Errorf("response lacks %q: %s", want, body)
		}
	}
}

// NewAPI clips the problems of the APIs it builds, not Huma's
// process-wide constructor: huma.NewError, which every API shares, is left
// as it is.
func TestNewAPILeavesHumaNewErrorAlone(t *testing.T) {
	server.NewAPI(http.NewServeMux(), "t", "1", "", "http://127.0.0.1:8080", false)
	long := strings.Repeat("x", 5000)
	m, ok := huma.NewError(http.StatusBadRequest, long).(*huma.ErrorModel)
	if !ok || m.Detail != long {
		t.Fatalf("huma.NewError changed the detail (%d bytes, want %d): a package-level setting leaked", len(m.Detail), len(long))
	}
}

// Hostile bodies do not come back whole, at any depth nor once per error:
// every problem response stays small.
func TestProblemClipsNestedEchoes(t *testing.T) {
	type runner struct {
		Bib  string `json:"bib"`
		Name string `json:"name,omitempty"`
	}
	// The service's own API set-up, quiet: humatest would log the hostile bodies.
	api := humatest.Wrap(quietTB{t}, server.NewAPI(http.NewServeMux(), "t", "1", "", "http://127.0.0.1:8080", false))
	huma.Register(api, huma.Operation{OperationID: "import", Method: http.MethodPost, Path: "/import", MaxBodyBytes: 8 << 20},
		func(ctx context.Context, in *struct {
			Body struct {
				CSV     string   `json:"csv,omitempty"`
				Runners []runner `json:"runners,omitempty"`
				Nested  any      `json:"nested,omitempty"`
				List    []int    `json:"list,omitempty" maxItems:"2"`
			}
		}) (*struct{}, error) {
			return nil, nil
		})
	huge := strings.Repeat("A", 1_000_000)
	var unknown strings.Builder
	unknown.WriteString(`{"csv":"` + huge + `"`)
	for i := range 7 {
		fmt.Fprintf(&unknown, `,"b%d":1`, i)
	}
	unknown.WriteString("}")
	var many strings.Builder // 200 runners, each with a wrong-typed name holding a long string
	many.WriteString(`{"runners":[`)
	for i := range 200 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `{"bib":"%d","name":{"x":"%s"}}`, i, strings.Repeat("B", 5000))
	}
	many.WriteString("]}")
	longKey := strings.Repeat("k", 100_000)
	for _, tc := range []struct {
		name, body string
		want       []string // what the clipped response still says
	}{
		{"unknown properties echo the object", unknown.String(), []string{`"location":"body.b6"`, `"unexpected property"`, `(1000000 bytes)`}},
		{"nested long string", `{"runners":[{"bib":"1","name":{"x":"` + strings.Repeat("A", 1_900_000) + `"}}]}`, []string{`"body.runners[0].name"`, `(1900000 bytes)`}},
		// Refused before validation: at most server.MaxBodyDepth levels.
		{"deep nesting", `{"list":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `}`, []string{`"body.list[0][0]`, `"nested more than 64 levels deep"`}},
		{"deep nesting unknown", `{"zz":` + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + `}`, []string{`"body.zz[0][0]`, `"nested more than 64 levels deep"`}},
		{"many errors", many.String(), []string{`"body.runners[9].name"`, `"and 190 more errors"`}},
		{"long unknown key", `{"` + longKey + `":{"` + longKey + `":1}}`, []string{`(100005 bytes)`}},
		{"wide object", `{"nested":1,"zz":{` + wide(500) + `}}`, []string{`"492 more keys"`, `"… (10 items)"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := api.Post("/import", strings.NewReader(tc.body))
			body := resp.Body.String()
			if resp.Code < 400 || resp.Code >= 500 {
				t.Fatalf("status %d: %.300s", resp.Code, body)
			}
			if len(body) > 4096 {
				t.Fatalf("status %d: problem response is %d bytes: %.600s", resp.Code, len(body), body)
			}
			if !json.Valid([]byte(body)) {
				t.Fatalf("not JSON: %.300s", body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("response lacks %s: %s", w, body)
				}
			}
		})
	}
}

// wide is n distinct 60-byte keys, each holding a 10-item list.
func wide(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%060d":[1,2,3,4,5,6,7,8,9,10]`, i)
	}
	return b.String()
}

// quietTB keeps humatest from logging megabyte requests and responses.
type quietTB struct{ *testing.T }

func (quietTB) Log(...any)          {}
func (quietTB) Logf(string, ...any) {}
