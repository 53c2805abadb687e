package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Op needs a token by default and takes each option; Fails adds up.
func TestOp(t *testing.T) {
	o := server.Op("create-thing", http.MethodPost, "/things", "Create a thing", "Things")
	want := huma.Operation{OperationID: "create-thing", Method: http.MethodPost, Path: "/things", Summary: "Create a thing",
		Tags: []string{"Things"}, Security: server.Bearer}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("Op = %+v, want %+v", o, want)
	}
	notFound := server.Fails(http.StatusNotFound)
	o = server.Op("create-thing", http.MethodPost, "/things", "Create a thing", "Things", server.Describe("Makes one."),
		server.Status(http.StatusCreated), server.MaxBody(1<<10), notFound, server.Fails(http.StatusConflict), server.NoToken())
	want.Description, want.DefaultStatus, want.MaxBodyBytes, want.Security = "Makes one.", http.StatusCreated, 1<<10, server.Public
	want.Errors = []int{http.StatusNotFound, http.StatusConflict}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("Op = %+v, want %+v", o, want)
	}
	// A shared option is not changed by the operations that use it.
	if o2 := server.Op("x", http.MethodGet, "/x", "X", "Things", notFound); !reflect.DeepEqual(o2.Errors, []int{http.StatusNotFound}) {
		t.Fatalf("Errors = %v", o2.Errors)
	}
}

// PageQuery's tags state its constants, and the API holds a request to
// them: MaxPageLimit passes, one more is refused with 422.
func TestPageQuery(t *testing.T) {
	if server.MaxPageLimit != ddb.MaxBatchGet {
		t.Fatalf("MaxPageLimit %d is not one batch read (%d)", server.MaxPageLimit, ddb.MaxBatchGet)
	}
	mux := http.NewServeMux()
	api := server.NewAPI(mux, "t", "1", "", "http://localhost", false)
	huma.Register(api, server.Op("list", http.MethodGet, "/list", "List", "Things", server.NoToken()),
		func(_ context.Context, in *server.PageQuery) (*struct{ Body server.PageQuery }, error) {
			return &struct{ Body server.PageQuery }{Body: *in}, nil
		})
	params := map[string]*huma.Schema{}
	for _, p := range api.OpenAPI().Paths["/list"].Get.Parameters {
		params[p.Name] = p.Schema
	}
	l, c := params["limit"], params["cursor"]
	if l == nil || c == nil || *l.Minimum != 1 || *l.Maximum != server.MaxPageLimit || fmt.Sprint(l.Default) != fmt.Sprint(server.DefaultPageLimit) ||
		c.MaxLength == nil || *c.MaxLength != server.MaxCursorLen {
		t.Fatalf("limit %+v, cursor %+v", l, c)
	}
	for q, status := range map[string]int{
		"": 200, fmt.Sprint("limit=", server.MaxPageLimit): 200, fmt.Sprint("limit=", server.MaxPageLimit+1): 422, "limit=0": 422,
		"cursor=" + strings.Repeat("c", server.MaxCursorLen): 200, "cursor=" + strings.Repeat("c", server.MaxCursorLen+1): 422,
	} {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/list?"+q, nil))
		if w.Code != status {
			t.Errorf("?%.40s: %d, want %d: %s", q, w.Code, status, w.Body)
		}
	}
}
