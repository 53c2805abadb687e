package photoapi

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/internal/awsfixture"
	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/pgtest"
)

// The cost benchmarks of the pipeline's ingest: one processed photo
// (POST /events/{eventId}/photos) and a batch of ingestBatch of them
// (POST /events/{eventId}/photos/batch), Pacer's handler as Run builds it
// against bareIngest (ingest_bare_test.go), both over internal/awsfixture
// for DynamoDB and the real Postgres for the event, its photographer and
// runners.

const (
	costPhotographer = "ph1"
	ingestBatch      = 25
	// costBib2 is the record's second bib, worn by no runner: the
	// response reports it unmatched.
	costBib2 = "2002"
)

// The ingest routes measured.
var (
	ingestPath      = "/events/" + costEvent + "/photos"
	ingestBatchPath = "/events/" + costEvent + "/photos/batch"
)

// ingestAt is the time of every posted ULID: in the past, so the records
// are plausible, and one millisecond, so the ULIDs differ only in their
// random part (photo.NewULID is monotonic).
var ingestAt = time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)

// ingestRecord is the processed-photo record posted, with ulid for its
// ULID: two bibs (one of a runner, one unmatched), one face, and the
// event's photographer.
func ingestRecord(ulid string) string {
	return `{"ulid":"` + ulid + `","originalFilename":"IMG_` + ulid + `.jpg","rawKey":"raw/` + ulid + `.jpg",` +
		`"processedKey":"processed/` + ulid + `.jpg","s3Uri":"s3://photos/processed/` + ulid + `.jpg",` +
		`"dimensions":{"width":4000,"height":3000},"format":"jpeg","size":2400000,` +
		`"bibs":["` + costBib + `","` + costBib2 + `"],"faceIds":["f1"],"photographerId":"` + costPhotographer + `"}`
}

// ingestBody is the request body of n records, each with a new ULID: one
// record when batch is false, else {"photos": [...]}.
func ingestBody(n int, batch bool) []byte {
	recs := make([]string, n)
	for i := range recs {
		recs[i] = ingestRecord(photo.NewULID(ingestAt))
	}
	if !batch {
		return []byte(recs[0])
	}
	return []byte(`{"photos":[` + strings.Join(recs, ",") + `]}`)
}

// pacerIngest is Pacer's API as Run serves it over f and the database at
// url, seeded as pacerAPI does and with the photographer costPhotographer
// assigned to the event.
func pacerIngest(tb testing.TB, f *awsfixture.Server, url string) http.Handler {
	tb.Helper()
	h := pacerAPI(tb, f, url)
	ctx := context.Background()
	_, err := h.roles.Directory.CreatePhotographer(ctx, costOrg, photo.Photographer{ID: costPhotographer, Handle: "ph1", DisplayName: "Photographer One"})
	if err != nil && !strings.Contains(err.Error(), "exists") {
		tb.Fatal(err)
	}
	if err := h.roles.Directory.Assign(ctx, costOrg, costEvent, costPhotographer); err != nil {
		tb.Fatal(err)
	}
	return h.handler
}

// ingestCall posts body to path and returns the response body, failing
// unless the status is want.
func ingestCall(tb testing.TB, h http.Handler, path, tok string, body []byte, want int) []byte {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		tb.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// benchIngest posts n records to path (one record, or a batch of n)
// against Pacer and bare as sub-benchmarks impl=pacer and impl=bare, each
// record with a new ULID, so that every photo is created. Making the body
// is in both sides' figures.
func benchIngest(b *testing.B, path string, n int, batch bool, want int) {
	benchPair(b, tableFixture, pacerIngest, func(b *testing.B, h http.Handler, tok string) {
		ingestCall(b, h, path, tok, ingestBody(n, batch), want)
	})
}

// BenchmarkIngestCost is the pipeline posting one processed photo (two
// bibs, one of them no runner's; the event's photographer): one Postgres
// round trip for the truth, one TransactWriteItems (the PHOTO and a
// BIB_INDEX item per bib), then the photographer's profile version and
// the bibs' privacy requests read again (one query each).
func BenchmarkIngestCost(b *testing.B) {
	benchIngest(b, ingestPath, 1, false, http.StatusCreated)
}

// BenchmarkIngestBatchCost is the pipeline posting ingestBatch photos in
// one batch: the same Postgres work as one photo, one BatchGetItem of the
// PHOTO keys, the BIB_INDEX items in BatchWriteItems of 25, and one
// conditional PutItem per photo, 16 at a time.
func BenchmarkIngestBatchCost(b *testing.B) {
	benchIngest(b, ingestBatchPath, ingestBatch, true, http.StatusOK)
}

// sortRuns sorts each run of consecutive calls of op in shapes (calls
// made concurrently, so in no set order), and leaves the others in order.
func sortRuns(shapes []string, op string) {
	for i := 0; i < len(shapes); i++ {
		j := i
		for j < len(shapes) && strings.HasPrefix(shapes[j], op+"\n") {
			j++
		}
		slices.Sort(shapes[i:j])
		i = j
	}
}

// firstDiff is the first index where a and b differ, or -1.
func firstDiff(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if nth(a, i) != nth(b, i) {
			return i
		}
	}
	return -1
}

// nth is s[i], or "(none)" past its end.
func nth(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

// ingestCalls are the DynamoDB operations an ingest may make.
var ingestCalls = []string{"DynamoDB.TransactWriteItems", "DynamoDB.BatchGetItem", "DynamoDB.BatchWriteItem", "DynamoDB.PutItem", "DynamoDB.GetItem",
	"DynamoDB.Query", "DynamoDB.UpdateItem", "DynamoDB.DeleteItem"}

// TestBareIngestsAsPacerDoes holds the ingest baseline to Pacer's work:
// posted the same records (the same ULIDs), one photo and a batch, both
// make the same DynamoDB calls (items' attributes, conditions, batch
// sizes, in order; the batch's PutItems, which run concurrently, sorted
// among themselves) and answer the same body but for Huma's $schema.
func TestBareIngestsAsPacerDoes(t *testing.T) {
	url := pgtest.NewDatabase(t)
	run := func(impl, path string, body []byte, want int) ([]string, string) {
		f := tableFixture(t)
		defer f.Close()
		h := pacerIngest(t, f, url)
		if impl == "bare" {
			h = bareHandler(t, f, url)
		}
		r := f.Record(ingestCalls...)
		f.Reset()
		out := ingestCall(t, h, path, costToken(t), body, want)
		var answer map[string]any
		if err := json.Unmarshal(out, &answer); err != nil {
			t.Fatalf("%s %s: %v: %s", impl, path, err, out)
		}
		delete(answer, "$schema")
		a, _ := json.Marshal(answer)
		return r.Shapes(), string(a)
	}
	for _, c := range []struct {
		path  string
		n     int
		batch bool
		want  int
		calls map[string]int
	}{
		{ingestPath, 1, false, http.StatusCreated, map[string]int{"DynamoDB.TransactWriteItems": 1}},
		{ingestBatchPath, ingestBatch, true, http.StatusOK, map[string]int{"DynamoDB.BatchGetItem": 1, "DynamoDB.BatchWriteItem": 2, "DynamoDB.PutItem": ingestBatch}},
	} {
		body := ingestBody(c.n, c.batch)
		pacer, pacerAnswer := run("pacer", c.path, body, c.want)
		bare, bareAnswer := run("bare", c.path, body, c.want)
		sortRuns(pacer, "DynamoDB.PutItem")
		sortRuns(bare, "DynamoDB.PutItem")
		count := map[string]int{}
		for _, s := range pacer {
			op, _, _ := strings.Cut(s, "\n")
			count[op]++
		}
		if !maps.Equal(count, c.calls) {
			t.Errorf("%s: Pacer's calls %v, want %v", c.path, count, c.calls)
		}
		if i := firstDiff(pacer, bare); i >= 0 {
			t.Errorf("%s: call %d differs (of %d by Pacer, %d by bare):\npacer: %s\nbare:  %s", c.path, i, len(pacer), len(bare), nth(pacer, i), nth(bare, i))
		}
		if pacerAnswer != bareAnswer || !strings.Contains(pacerAnswer, `"unmatchedBibs":["`+costBib2+`"]`) {
			t.Errorf("%s: answers differ:\npacer %s\nbare  %s", c.path, pacerAnswer, bareAnswer)
		}
	}
}
