package photoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/stalltest"
)

// The storm: the pipeline posting photos (each writer one photo, retried
// after Retry-After until it is written) and organizers searching by
// bib, while a dependency stalls (stalltest's defaults: deadline 1 s, a
// 2.5 s pause).
const (
	stallWriters  = 40
	stallReaders  = 60
	stallSearches = 4
	// stallMaxInFlight is the API's in-flight bound: below the calls the
	// stall piles up, so that it sheds some (503 overloaded) too.
	stallMaxInFlight = 30
)

// Every call answers within its deadline (plus a small margin) while
// DynamoDB (the test's own DynamoDB Local, paused with SIGSTOP) or
// Postgres (behind a proxy that stops forwarding) stalls in the middle
// of a storm of photo ingests and bib searches: each answer is a success
// or a 503 problem+json with Retry-After, timeout past the deadline or
// overloaded past the in-flight bound, each counted by type. A photo whose post was given
// up may still have been written; its retry answers exists, and after
// the resume every photo is in the table exactly once, found by its bib.
func TestEveryCallAnswersWithinItsDeadlineWhileADependencyStalls(t *testing.T) {
	t.Parallel()
	t.Run("DynamoDB", func(t *testing.T) {
		stack, err := standin.Start(context.Background(), standin.Config{DynamoDB: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stack.Close() })
		photoStallStorm(t, stack.DynamoDBEndpoint, func() (func() error, error) { return stack.Pause(standin.DynamoDB) })
	})
	t.Run("Postgres", func(t *testing.T) {
		photoStallStorm(t, "", nil)
	})
}

// photoStallStorm runs the storm over photo-api on the DynamoDB Local at
// endpoint (the package's if "") and a Postgres database behind a
// stalling proxy, and pauses what pause pauses (the proxy when nil).
func photoStallStorm(t *testing.T, endpoint string, pause func() (resume func() error, err error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	stage, awsCfg := runStage(ctx, t, "stall")
	if endpoint != "" {
		// The environment's endpoint would win over BaseEndpoint.
		awsCfg.ConfigSources, awsCfg.BaseEndpoint = nil, aws.String(endpoint)
	}
	db, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := stalltest.NewProxy(t, db.Host)
	db.Host = proxy.Addr()
	if pause == nil {
		pause = func() (func() error, error) { proxy.Pause(); return func() error { proxy.Resume(); return nil }, nil }
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- Run(runCtx, Config{Listener: l, Stage: stage, DatabaseURL: db.String(), AWS: &awsCfg, Dev: true, Setup: true,
			Bounds: server.Bounds{Read: stalltest.Deadline, Write: stalltest.Deadline, Admin: 10 * time.Second, Bulk: 10 * time.Second, MaxInFlight: stallMaxInFlight},
			Log:    slog.New(slog.DiscardHandler)})
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("photo-api: %v", err)
		}
	})
	base := "http://" + l.Addr().String()
	call := func(method, path string, body any, roles ...string) *http.Request {
		var r io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			r = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, base+path, r)
		if err != nil {
			t.Fatal(err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set(server.DevUserHeader, "u1")
		req.Header.Set(server.DevRolesHeader, "organizer")
		req.Header.Set(server.DevOrgHeader, "o1")
		if len(roles) > 0 {
			req.Header.Set(server.DevRolesHeader, roles[0])
		}
		return req
	}
	setup := stalltest.NewClient()
	must := func(req *http.Request, status int) stalltest.Answer {
		t.Helper()
		a := setup.Do(t, req)
		if a.Status != status {
			t.Fatalf("%s: %d %s, want %d", a.Call, a.Status, a.Body, status)
		}
		return a
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(base + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("photo-api did not serve within a minute")
		}
	}
	must(call(http.MethodPost, "/admin/organizers", map[string]any{"organizerId": "o1", "name": "Org"}, "admin"), http.StatusCreated)
	must(call(http.MethodPost, "/events", map[string]any{"eventId": "e1", "name": "Race", "startsOn": "2024-11-09", "published": true}), http.StatusCreated)
	must(call(http.MethodPost, "/photographers", map[string]any{"photographerId": "p1", "handle": "h_p1", "displayName": "Studio"}), http.StatusCreated)
	must(call(http.MethodPut, "/events/e1/photographers/p1", nil), http.StatusNoContent)
	must(call(http.MethodPost, "/events/e1/runners", map[string]any{"csv": "bib,name\n1000,A\n1001,B\n1002,C\n1003,D\n"}), http.StatusOK)
	bib := func(i int) string { return fmt.Sprint(1000 + i%4) }

	c := stalltest.NewClient()
	written := make([]string, stallWriters)
	stalltest.Storm{Users: stallWriters + stallReaders}.Run(t, pause, func(i int) {
		if i >= stallWriters {
			for range stallSearches {
				c.Do(t, call(http.MethodGet, "/events/e1/bibs/"+bib(i)+"/photos", nil))
				time.Sleep(stalltest.Spread / 2)
			}
			return
		}
		r := rec(i, "p1", bib(i))
		for began := time.Now(); time.Since(began) < time.Minute; {
			a := c.Do(t, call(http.MethodPost, "/events/e1/photos", r))
			if a.Status == http.StatusCreated || a.Status == http.StatusOK {
				written[i] = r["ulid"].(string)
				return
			}
			if !stalltest.Unavailable(a) {
				return // Check reports it
			}
			stalltest.Wait(a)
		}
		t.Errorf("photo %d: not written within a minute", i)
	})
	if n := c.Check(t, stalltest.Deadline, stalltest.Margin); n == 0 {
		t.Fatal("no call was answered 503: the stall did not reach the API, and the test proves nothing")
	}
	if t.Failed() {
		return
	}
	landed, refused := 0, map[string]float64{}
	for _, a := range c.Answers() {
		if a.Call == "POST /events/e1/photos" && a.Status == http.StatusOK {
			landed++
		}
		if a.Status == http.StatusServiceUnavailable {
			refused[strings.TrimPrefix(a.Type, server.ProblemBase)]++
		}
	}
	t.Logf("%d photos were written by a post given up at its deadline: their retry answered exists", landed)
	// Past its deadline and past the bound, and counted as answered.
	fams := metricstest.Scrape(t, base+"/metrics")
	for _, typ := range []string{server.TimeoutProblem, server.OverloadedProblem} {
		counted := fams.Value("pacer_http_problems_total", "class", "server", "status", "503", "type", typ)
		if refused[typ] == 0 || counted != refused[typ] {
			t.Errorf("%v answers 503 %s, %v counted; want some, all counted", refused[typ], typ, counted)
		}
	}

	// Every photo written once: in the gallery once, found by its bib, one
	// PHOTO and one BIB_INDEX item each in the table.
	var gallery struct{ Photos []*photo.Photo }
	if err := json.Unmarshal(must(call(http.MethodGet, "/events/e1/photos?limit=100", nil), http.StatusOK).Body, &gallery); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range gallery.Photos {
		got = append(got, p.ULID)
	}
	want := slices.Clone(written)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the gallery holds %d photos %v, want the %d written %v", len(got), got, len(want), want)
	}
	found := 0
	for i := range 4 {
		var b struct{ Photos []*photo.Photo }
		if err := json.Unmarshal(must(call(http.MethodGet, "/events/e1/bibs/"+bib(i)+"/photos?limit=100", nil), http.StatusOK).Body, &b); err != nil {
			t.Fatal(err)
		}
		found += len(b.Photos)
	}
	out, err := awsclient.DynamoDB(awsCfg).Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(dynamostore.TableName(stage)), Select: "COUNT", ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if found != stallWriters || out.Count != 2*stallWriters {
		t.Fatalf("the bib searches find %d photos and the table holds %d items; want %d photos, %d items", found, out.Count, stallWriters, 2*stallWriters)
	}
}
