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

// A body with a repeated key or bytes that are not UTF-8 is refused with
// the location of the problem, and the handler never runs: encoding/json
// alone would keep the last key and replace the bytes with U+FFFD.
func TestStrictJSONBodies(t *testing.T) {
	api := humatest.Wrap(t, server.NewAPI(http.NewServeMux(), "t", "1", "", false))
	var calls atomic.Int64
	type item struct {
		Name string `json:"name"`
		Tags []any  `json:"tags,omitempty"`
	}
	huma.Register(api, huma.Operation{OperationID: "create", Method: http.MethodPost, Path: "/things"},
		func(ctx context.Context, in *struct {
			Body struct {
				Capacity int64  `json:"capacity,omitempty"`
				Title    string `json:"title,omitempty"`
				Items    []item `json:"items,omitempty"`
			}
		}) (*struct{}, error) {
			calls.Add(1)
			return nil, nil
		})
	for body, want := range map[string]string{
		`{"capacity":-1,"capacity":5}`:                                "body.capacity",
		`{"capacity":-1,"\u0063apacity":5}`:                           "body.capacity",
		`{"items":[{"name":"a"},{"name":"b","name":"c"}]}`:            "body.items[1].name",
		`{"items":[{"name":"a","tags":[{"x":1,"y":{"z":1,"z":2}}]}]}`: "body.items[0].tags[0].y.z",
		"{\"title\":\"\xff\xfe\"}":                                    "body",
	} {
		resp := api.Post("/things", strings.NewReader(body))
		if resp.Code != http.StatusBadRequest {
			t.Fatalf("%q: status %d: %s", body, resp.Code, resp.Body.String())
		}
		var p huma.ErrorModel
		if err := json.Unmarshal(resp.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Errors) != 1 || p.Errors[0].Location != want {
			t.Fatalf("%q: %s, want one error at %s", body, resp.Body.String(), want)
		}
		if strings.Contains(p.Errors[0].Message, "(at ") {
			t.Fatalf("%q: message %q still carries its location", body, p.Errors[0].Message)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the handler ran %d times for refused bodies", n)
	}
	// The same keys in different objects, and valid UTF-8, are fine.
	for _, body := range []string{
		`{"capacity":5,"title":"Seoul 마라톤 🏃","items":[{"name":"a"},{"name":"a","tags":[{"name":1},{"name":2}]}]}`,
		`{"title":"a\",\"title\":{[","capacity":1}`, // keys and brackets inside a string are text
	} {
		if resp := api.Post("/things", strings.NewReader(body)); resp.Code != http.StatusNoContent {
			t.Fatalf("%q: status %d: %s", body, resp.Code, resp.Body.String())
		}
	}
	// Not an object at all: the schema says so (no panic in the key check).
	if resp := api.Post("/things", strings.NewReader(`"just a string"`)); resp.Code != http.StatusUnprocessableEntity {
		t.Fatalf("a string body: status %d: %s", resp.Code, resp.Body.String())
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the handler ran %d times, want 2 (the valid bodies)", n)
	}
}
