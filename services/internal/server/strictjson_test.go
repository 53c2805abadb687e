package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/pacerhq/pacer/services/internal/server"
)

// strictAPI is an API built by server.NewAPI with one POST /things route;
// calls counts the handler's runs.
func strictAPI(t *testing.T) (humatest.TestAPI, *atomic.Int64) {
	api := humatest.Wrap(t, server.NewAPI(http.NewServeMux(), "t", "1", "", "http://127.0.0.1:8080", false))
	var calls atomic.Int64
	type item struct {
		Name  string `json:"name"`
		Width int64  `json:"width,omitempty"`
		Small int8   `json:"small,omitempty"`
		Tags  []any  `json:"tags,omitempty"`
	}
	huma.Register(api, huma.Operation{OperationID: "create", Method: http.MethodPost, Path: "/things"},
		func(ctx context.Context, in *struct {
			Body struct {
				Capacity int64  `json:"capacity,omitempty" minimum:"0"`
				Title    string `json:"title,omitempty"`
				Items    []item `json:"items,omitempty"`
			}
		}) (*struct{}, error) {
			calls.Add(1)
			return nil, nil
		})
	return api, &calls
}

// A body with a repeated key (also spelled with escapes or in another
// case), bytes that are not UTF-8, an unpaired surrogate escape or absurd
// nesting is refused with the location of the problem, and the handler
// never runs: encoding/json alone would keep the last key and replace the
// bytes with U+FFFD. A number the Go field cannot hold (5e0 for an
// integer) is named by its place in the body, with no Go type names.
func TestStrictJSONBodies(t *testing.T) {
	api, calls := strictAPI(t)
	for _, c := range []struct {
		body     string
		status   int
		location string
	}{
		{`{"capacity":-1,"capacity":5}`, 400, "body.capacity"},
		{`{"capacity":-1,"\u0063apacity":5}`, 400, "body.capacity"},
		{`{"capacity":1,"CAPACITY":-5}`, 422, "body.CAPACITY"},
		{`{"capacity":1,"ſapacity":-5}`, 422, "body.ſapacity"},
		{`{"items":[{"name":"a"},{"name":"b","name":"c"}]}`, 400, "body.items[1].name"},
		{`{"items":[{"name":"a","tags":[{"x":1,"y":{"z":1,"z":2}}]}]}`, 400, "body.items[0].tags[0].y.z"},
		{`{"items":[{"name":"a","first name":1,"first name":2}]}`, 400, "body.items[0].first name"},
		{`{"items":[{"name":"a","x (at body.admin)":1,"x (at body.admin)":2}]}`, 400, "body.items[0].x (at body.admin)"},
		{"{\"title\":\"\xff\xfe\"}", 400, "body"},
		{`{"title":"\udead"}`, 400, "body.title"},
		{`{"title":"\ud83d"}`, 400, "body.title"},
		{`{"items":[{"name":"a"},{"name":"\ud83dx"}]}`, 400, "body.items[1].name"},
		{`{"items":[{"name":"a","tags":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}]}`, 400, "body.items[0].tags" + strings.Repeat("[0]", 61)},
		{`{"capacity":5e0}`, 422, "body.capacity"},
		{`{"capacity":1e400}`, 400, "body.capacity"},
		{`{"items":[{"name":"a"},{"name":"b","width":-1e999}]}`, 400, "body.items[1].width"},
		{`{"capacity":1.0}`, 422, "body.capacity"},
		{`{"items":[{"name":"a"},{"name":"b","width":1e3}]}`, 422, "body.items[1].width"},
		{`{"items":[{"name":"a","small":300}]}`, 422, "body.items[0].small"},
	} {
		resp := api.Post("/things", strings.NewReader(c.body))
		if resp.Code != c.status {
			t.Fatalf("%q: status %d, want %d: %s", c.body, resp.Code, c.status, resp.Body.String())
		}
		var p huma.ErrorModel
		if err := json.Unmarshal(resp.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Errors) != 1 || !strings.HasPrefix(c.location, strings.Split(p.Errors[0].Location, "…")[0]) ||
			(!strings.Contains(p.Errors[0].Location, "…") && p.Errors[0].Location != c.location) {
			t.Fatalf("%q: %s, want one error at %s", c.body, resp.Body.String(), c.location)
		}
		for _, leak := range []string{"(at ", "Go struct", "int64", "int8", "json: "} {
			if strings.Contains(p.Errors[0].Message, leak) {
				t.Fatalf("%q: message %q says %q", c.body, p.Errors[0].Message, leak)
			}
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for refused bodies", n)
	}
	// The same keys in different objects, valid UTF-8 and surrogate pairs,
	// and keys and brackets inside strings are fine.
	for _, body := range []string{
		`{"capacity":5,"title":"Seoul 마라톤 🏃","items":[{"name":"a"},{"name":"a","tags":[{"name":1},{"name":2}]}]}`,
		`{"title":"a\",\"title\":{[","capacity":1}`,
		`{"title":"\ud83c\udfc3 \u00e9 \\ud83d"}`,
	} {
		if resp := api.Post("/things", strings.NewReader(body)); resp.Code != http.StatusNoContent {
			t.Fatalf("%q: status %d: %s", body, resp.Code, resp.Body.String())
		}
	}
	// Not an object at all: the schema says so (no panic in the checks).
	if resp := api.Post("/things", strings.NewReader(`"just a string"`)); resp.Code != http.StatusUnprocessableEntity {
		t.Fatalf("a string body: status %d: %s", resp.Code, resp.Body.String())
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("the handler ran %d times, want 3 (the valid bodies)", n)
	}
}

// Building APIs concurrently does not touch Huma's shared format table,
// and an API not built by NewAPI keeps plain encoding/json.
func TestNewAPILeavesHumaDefaultsAlone(t *testing.T) {
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			server.NewAPI(http.NewServeMux(), "t", "1", "", "http://127.0.0.1:8080", false)
		}()
	}
	for range 8 {
		<-done
	}
	_, plain := humatest.New(t)
	huma.Register(plain, huma.Operation{OperationID: "p", Method: http.MethodPost, Path: "/p"},
		func(ctx context.Context, in *struct{ Body struct{ A int } }) (*struct{}, error) { return nil, nil })
	if resp := plain.Post("/p", strings.NewReader(`{"A":1,"A":2}`)); resp.Code != http.StatusNoContent {
		t.Fatalf("a plain Huma API refused a repeated key (%d): NewAPI changed huma.DefaultFormats", resp.Code)
	}
}
