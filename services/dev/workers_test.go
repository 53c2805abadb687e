package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pacerhq/pacer/services/dev/workerpool"
)

// GET /workers lists the pool's live processes with their /metrics URLs,
// and none once they are stopped.
func TestWorkersHandler(t *testing.T) {
	pool := workerpool.New(workerpool.Config{Command: "sleep", Args: []string{"60"}, StopTimeout: 5 * time.Second})
	defer pool.Close()
	if err := pool.Scale(2); err != nil {
		t.Fatal(err)
	}
	get := func() []workerReport {
		t.Helper()
		rec := httptest.NewRecorder()
		workersHandler(pool).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/workers", nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET /workers: %d %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		var out []workerReport
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out == nil {
			t.Fatalf("GET /workers body %q: %v", rec.Body.String(), err)
		}
		return out
	}
	got := get()
	procs := pool.Procs()
	if len(got) != 2 || len(procs) != 2 {
		t.Fatalf("GET /workers = %+v, pool %+v", got, procs)
	}
	for i, p := range procs {
		if got[i].PID != p.PID || got[i].Metrics != "http://"+p.OpsAddr+"/metrics" {
			t.Errorf("worker %d = %+v, want pid %d and http://%s/metrics", i, got[i], p.PID, p.OpsAddr)
		}
	}
	if err := pool.Scale(0); err != nil {
		t.Fatal(err)
	}
	if got := get(); len(got) != 0 {
		t.Errorf("after scaling to 0: %+v", got)
	}
}
