package photoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/photo"
)

// The benchmarks measure fixed workloads against the local stack and report
// them as metrics; run them with
//
//	go test -run '^$' -bench . -benchtime 1x ./services/internal/photoapi
//
// Each starts an HTTP server on loopback in front of the real API and
// measures DynamoDB Local's raw PutItem rate in the same run, so the
// throughput is reported as a ratio to what the stand-in allows.

// benchSetup creates an organizer with an event, an assigned photographer
// and runners 1000..1199.
func benchSetup(b *testing.B, e *env) {
	b.Helper()
	ctx := e.ctx
	steps := []error{
		func() error {
			_, err := e.d.Directory.CreateOrganizer(ctx, photo.Organizer{ID: "o1", Name: "Bench"})
			return err
		}(),
		func() error {
			_, err := e.d.Directory.CreateEvent(ctx, "o1", photo.Event{ID: "e1", Name: "Bench Race"})
			return err
		}(),
		func() error {
			_, err := e.d.Directory.CreatePhotographer(ctx, "o1", photo.Photographer{ID: "p1", Handle: "h", DisplayName: "P"})
			return err
		}(),
		e.d.Directory.Assign(ctx, "o1", "e1", "p1"),
	}
	for _, err := range steps {
		if err != nil {
			b.Fatal(err)
		}
	}
	var rs []photo.Runner
	for i := range 200 {
		rs = append(rs, photo.Runner{Bib: fmt.Sprint(1000 + i), Name: fmt.Sprint("Runner ", i)})
	}
	if _, err := e.d.Directory.ImportRunners(ctx, "o1", "e1", rs); err != nil {
		b.Fatal(err)
	}
}

// rawPutRate measures DynamoDB Local's PutItem rate (items/s) with the given
// concurrency, on the benchmark's own table.
func rawPutRate(b *testing.B, e *env, n, workers int) float64 {
	b.Helper()
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				_, err := e.ddb.Client.PutItem(e.ctx, &dynamodb.PutItemInput{
					TableName: aws.String(e.ddb.Table.Name()),
					Item: map[string]types.AttributeValue{
						"PK":   &types.AttributeValueMemberS{Value: "RAW#bench"},
						"SK":   &types.AttributeValueMemberS{Value: fmt.Sprintf("ITEM#%08d", i)},
						"blob": &types.AttributeValueMemberS{Value: "x012345678901234567890123456789012345678901234567890123456789"},
					},
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

func benchRecord(i int, bibs ...string) map[string]any {
	r := rec(i, "p1", bibs...)
	r["ulid"] = photo.NewULID(at.Add(time.Duration(i) * time.Millisecond))
	return r
}

func post(b *testing.B, client *http.Client, url, tok string, v any) {
	body, _ := json.Marshal(v)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Authorization", tok[len("Authorization: "):])
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		b.Errorf("POST %s: %s", url, resp.Status)
	}
}

// BenchmarkIngestHTTP: photos with 2 bibs each (3 items) through the HTTP
// API, batch endpoint (100 per request) and single endpoint, against
// DynamoDB Local's raw PutItem rate.
func BenchmarkIngestHTTP(b *testing.B) {
	e := newEnv(b)
	benchSetup(b, e)
	srv := e.server(b)
	tok := orgToken(b, "o1")
	const (
		batchPhotos  = 3000
		singlePhotos = 600
		workers      = 4
		rawPuts      = 3000
	)
	for b.Loop() {
		raw := rawPutRate(b, e, rawPuts, workers)

		// Batch endpoint.
		var seq atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					lo := int(seq.Add(100)) - 100
					if lo >= batchPhotos {
						return
					}
					var ps []any
					for i := lo; i < lo+100; i++ {
						ps = append(ps, benchRecord(i, fmt.Sprint(1000+i%200), fmt.Sprint(1000+(i*7+3)%200)))
					}
					post(b, srv.Client(), srv.URL+"/events/e1/photos/batch", tok, map[string]any{"photos": ps})
				}
			})
		}
		wg.Wait()
		batchRate := float64(batchPhotos) / time.Since(start).Seconds()

		// Single endpoint (one transaction per photo).
		seq.Store(0)
		start = time.Now()
		for range workers * 2 {
			wg.Go(func() {
				for {
					i := int(seq.Add(1)) - 1
					if i >= singlePhotos {
						return
					}
					post(b, srv.Client(), srv.URL+"/events/e1/photos", tok, benchRecord(100000+i, fmt.Sprint(1000+i%200), fmt.Sprint(1000+(i*7+3)%200)))
				}
			})
		}
		wg.Wait()
		singleRate := float64(singlePhotos) / time.Since(start).Seconds()

		b.ReportMetric(raw, "raw-PutItem-items/s")
		b.ReportMetric(batchRate, "batch-photos/s")
		b.ReportMetric(3*batchRate/raw, "batch-items/raw-ratio")
		b.ReportMetric(singleRate, "single-photos/s")
		b.ReportMetric(3*singleRate/raw, "single-items/raw-ratio")
		b.Logf("raw PutItem %.0f items/s; batch ingest %.0f photos/s = %.0f items/s (%.2f× raw); single ingest %.0f photos/s = %.0f items/s (%.2f× raw)",
			raw, batchRate, 3*batchRate, 3*batchRate/raw, singleRate, 3*singleRate, 3*singleRate/raw)
	}
}

// BenchmarkBibSearch10k: first pages (limit 50) of bib searches through the
// HTTP API on an event of 10,000 photos with 2 bibs each over 200 bibs
// (about 100 photos per bib), and full 100-photo pages of a bib on every
// photo; p50 and p95 latencies.
func BenchmarkBibSearch10k(b *testing.B) {
	e := newEnv(b)
	benchSetup(b, e)
	const photos = 10000
	start := time.Now()
	for lo := 0; lo < photos; lo += photo.MaxBatch {
		var recs []photo.Record
		for i := lo; i < lo+photo.MaxBatch; i++ {
			id := photo.NewULID(at.Add(time.Duration(i) * time.Millisecond))
			recs = append(recs, photo.Record{ULID: id, OriginalFilename: "f.jpg", RawKey: "raw/" + id, ProcessedKey: "p/" + id,
				S3URI: "s3://b/p/" + id, Dimensions: photo.Dimensions{Width: 10, Height: 10}, Format: "jpeg", Size: 1,
				Bibs: []string{fmt.Sprint(1000 + i%200), "7"}, PhotographerID: "p1"})
		}
		if _, err := e.d.Ingest.IngestBatch(e.ctx, "o1", "e1", recs); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("seeded %d photos (%d items) in %s", photos, 3*photos, time.Since(start).Round(time.Millisecond))
	srv := e.server(b)
	tok := orgToken(b, "o1")[len("Authorization: "):]
	get := func(path string) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", tok)
		t0 := time.Now()
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var out struct{ Photos []json.RawMessage }
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil || resp.StatusCode != 200 || len(out.Photos) == 0 {
			b.Fatalf("GET %s: %s %v", path, resp.Status, err)
		}
		return d
	}
	pct := func(ds []time.Duration, p float64) float64 {
		slices.Sort(ds)
		return float64(ds[int(float64(len(ds)-1)*p)].Microseconds()) / 1000
	}
	for b.Loop() {
		var typical, hot []time.Duration
		for range 300 {
			typical = append(typical, get(fmt.Sprintf("/events/e1/bibs/%d/photos?limit=50", 1000+rand.IntN(200))))
		}
		for range 100 {
			hot = append(hot, get("/events/e1/bibs/7/photos?limit=100"))
		}
		b.ReportMetric(pct(typical, 0.50), "p50-ms")
		b.ReportMetric(pct(typical, 0.95), "p95-ms")
		b.ReportMetric(pct(hot, 0.50), "hot-p50-ms")
		b.ReportMetric(pct(hot, 0.95), "hot-p95-ms")
		b.Logf("bib search, 10,000-photo event: limit=50 p50 %.1f ms p95 %.1f ms; bib on every photo, limit=100: p50 %.1f ms p95 %.1f ms",
			pct(typical, 0.50), pct(typical, 0.95), pct(hot, 0.50), pct(hot, 0.95))
	}
}
