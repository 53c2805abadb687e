package photoapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/phototest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/testkit/spectest"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{DynamoDB: true, Postgres: true})
}

var secret = []byte("photoapi-test-secret-at-least-32-bytes")

// env is one test's API on its own database and table.
type env struct {
	t   *testing.T
	ctx context.Context
	api humatest.TestAPI // every response checked against the spec
	raw huma.API
	mux *http.ServeMux
	ddb *ddbtest.Env
	d   Deps // the roles behind api
}

func newEnv(t testing.TB) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with the Deps adjusted by adjust (if not nil).
func newEnvWith(t testing.TB, adjust func(*Deps)) *env {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	k := phototest.New(ctx, t)
	v, err := auth.NewVerifier(ctx, auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	d := kitDeps(k)
	if adjust != nil {
		adjust(&d)
	}
	api := NewAPI(mux, d, v, false)
	e := &env{ctx: ctx, raw: api, mux: mux, ddb: k.DDB, d: d}
	if tt, ok := t.(*testing.T); ok {
		e.t = tt
		e.api = spectest.Wrap(tt, api)
	}
	return e
}

// kitDeps are the test kit's roles.
func kitDeps(k *phototest.Env) Deps {
	return Deps{Ingest: k.Ingest, Search: k.Search, Directory: k.Directory, Privacy: k.Privacy, Timing: k.Timing}
}

// server starts a real HTTP server on loopback for the API, its responses
// checked against the spec.
func (e *env) server(t testing.TB) *httptest.Server {
	s := httptest.NewServer(spectest.Handler(t, e.raw, e.mux))
	t.Cleanup(s.Close)
	return s
}

func token(t testing.TB, org string, roles ...string) string {
	tok, err := auth.Mint(secret, auth.Principal{UserID: "u-" + org, Roles: roles, OrgID: org}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return "Authorization: Bearer " + tok
}

func orgToken(t testing.TB, org string) string { return token(t, org, auth.RoleOrganizer) }

// do sends a request and checks its status.
func (e *env) do(method, path string, status int, args ...any) *httptest.ResponseRecorder {
	e.t.Helper()
	resp := e.api.Do(method, path, args...)
	if resp.Code != status {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.Code, status, resp.Body.String())
	}
	return resp
}

// setup creates org with an event (published or not), photographer ph
// assigned to it, and runners 1000..1009.
func (e *env) setup(org, event, ph string, published bool) {
	e.t.Helper()
	admin := token(e.t, "", auth.RoleAdmin)
	tok := orgToken(e.t, org)
	e.do("POST", "/admin/organizers", 201, admin, map[string]any{"organizerId": org, "name": "Org " + org})
	e.do("POST", "/events", 201, tok, map[string]any{"eventId": event, "name": "Race", "startsOn": "2024-11-09", "published": published})
	e.do("POST", "/photographers", 201, tok, map[string]any{"photographerId": ph, "handle": "h_" + ph, "displayName": "Studio " + ph})
	e.do("PUT", "/events/"+event+"/photographers/"+ph, 204, tok)
	var csv strings.Builder
	csv.WriteString("bib,name\n")
	for i := range 10 {
		fmt.Fprintf(&csv, "%d,Runner %d\n", 1000+i, i)
	}
	e.do("POST", "/events/"+event+"/runners", 200, tok, map[string]any{"csv": csv.String()})
}

var at = time.Date(2024, 11, 9, 10, 30, 0, 0, time.UTC)

// rec returns a processed-photo record body.
func rec(i int, ph string, bibs ...string) map[string]any {
	id := photo.NewULID(at.Add(time.Duration(i) * time.Second))
	if bibs == nil {
		bibs = []string{}
	}
	r := map[string]any{
		"ulid": id, "originalFilename": fmt.Sprintf("DSC_%04d.jpg", i), "rawKey": "raw/" + id, "processedKey": "processed/" + id + ".jpg",
		"s3Uri": "s3://bucket/processed/" + id + ".jpg", "dimensions": map[string]int{"width": 3840, "height": 2160},
		"format": "jpeg", "size": 1234, "bibs": bibs, "faceIds": []string{}, "photographerId": ph,
	}
	if ph == "" {
		delete(r, "photographerId")
	}
	return r
}

// items counts the table's items.
func (e *env) items() int {
	e.t.Helper()
	out, err := e.ddb.Client.Scan(e.ctx, &dynamodb.ScanInput{TableName: aws.String(e.ddb.Table.Name()), Select: "COUNT", ConsistentRead: aws.Bool(true)})
	if err != nil {
		e.t.Fatal(err)
	}
	return int(out.Count)
}

func body(r *httptest.ResponseRecorder) string {
	b, _ := io.ReadAll(r.Result().Body)
	return string(b)
}
