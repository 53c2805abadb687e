package asynceventapi

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/server"
)

// BenchmarkIngestInstrumentation measures what the metrics cost a
// participation: the same API built on one table and queue, plain,
// instrumented as Run builds it (HTTP timing, the AWS call middleware,
// consumed capacity, the participation observer), and instrumented
// without asking DynamoDB for consumed capacity, with requests rotating
// between the three so that all see the same stand-ins at the same moment.
// It reports µs per request and the ratios to plain (the goal is ≤ 1.05).
//
//	go test ./services/internal/asynceventapi -run '^$' -bench IngestInstrumentation -benchtime 400x
func BenchmarkIngestInstrumentation(b *testing.B) {
	ctx := context.Background()
	env := asynceventtest.New(b, asynceventtest.Options{})
	awsCfg, err := awsclient.Load(ctx)
	if err != nil {
		b.Fatal(err)
	}
	v, err := server.AuthSettings{}.Verifier(ctx, true)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	build := func(instrumented, capacity bool, event string) http.Handler {
		cfg := Config{Config: asynceventbackend.Config{Table: env.DDB.Table.Name(), Queue: env.QueueName, AWS: &awsCfg, Log: log,
			CursorKey: []byte("bench-cursor-key-0123456789abcdef")}}
		var m *apiMetrics
		if instrumented {
			m = newMetrics(&cfg)
			if !capacity {
				cfg.DDBObserver = nil // DynamoDB is not asked for consumed capacity
			}
		}
		roles, err := asynceventbackend.OpenAPI(ctx, cfg.Config)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := roles.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: event, EventType: asyncevent.FirstCome, Capacity: 1000000}); err != nil {
			b.Fatal(err)
		}
		mux := http.NewServeMux()
		NewAPI(mux, Deps{Ingest: roles.Ingest, Query: roles.Query, Admin: roles.Admin, Operations: roles.Operations, Log: log}, v, true)
		if !instrumented {
			return mux
		}
		return m.serve(mux, roles.Operations, roles.Queue, log)
	}
	handlers := []http.Handler{build(false, false, "plain"), build(true, true, "instrumented"), build(true, false, "nocapacity")}
	paths := []string{"/events/plain/participations", "/events/instrumented/participations", "/events/nocapacity/participations"}
	var took [3]time.Duration
	var n [3]int
	post := func(i int) {
		k := i % 3
		req := httptest.NewRequest(http.MethodPost, paths[k], nil)
		req.Header.Set(server.DevUserHeader, fmt.Sprintf("u%07d", i))
		w := httptest.NewRecorder()
		start := time.Now()
		handlers[k].ServeHTTP(w, req)
		took[k] += time.Since(start)
		n[k]++
		if w.Code != http.StatusAccepted {
			b.Fatalf("%s: %d %s", paths[k], w.Code, w.Body)
		}
	}
	for i := range 20 { // warm up: connections, the event caches
		post(9000000 + i)
	}
	took, n = [3]time.Duration{}, [3]int{}
	i := 0
	for b.Loop() {
		post(i)
		i++
	}
	if min(n[0], n[1], n[2]) == 0 {
		return
	}
	us := func(k int) float64 { return float64(took[k].Microseconds()) / float64(n[k]) }
	b.ReportMetric(us(0), "plain-µs/req")
	b.ReportMetric(us(1), "instrumented-µs/req")
	b.ReportMetric(us(1)/us(0), "ratio")
	b.ReportMetric(us(2)/us(0), "ratio-without-capacity")
}
