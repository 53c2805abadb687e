package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func metricsText(succeeded, rejected, retryable, waiting, final float64, conc int) string {
	return fmt.Sprintf(`# HELP pacer_worker_messages_total Deliveries handled.
# TYPE pacer_worker_messages_total counter
pacer_worker_messages_total{outcome="succeeded"} %g
pacer_worker_messages_total{outcome="rejected"} %g
pacer_worker_messages_total{outcome="retryable"} %g
pacer_worker_messages_total{outcome="waiting"} %g
pacer_worker_messages_total{outcome="final"} %g
pacer_worker_handler_duration_seconds_count{outcome="succeeded"} 999
pacer_worker_concurrency %d
pacer_worker_decided_total{event_type="FIRST_COME"} %g
pacer_worker_decided_total{event_type="LOTTERY"} 0
process_cpu_seconds_total %g
process_resident_memory_bytes %g
`, succeeded, rejected, retryable, waiting, final, conc, succeeded+rejected+final, (succeeded+rejected+final)/100, float64(conc<<20))
}

func TestParseWorkerMetrics(t *testing.T) {
	for _, c := range []struct {
		name    string
		text    string
		decided float64
		conc    int
		err     bool
	}{
		{"decided: the decided counts, not retries or waits", metricsText(7, 3, 100, 50, 2, 10), 12, 10, false},
		{"nothing handled yet", metricsText(0, 0, 4, 0, 0, 16), 0, 16, false},
		{"not a worker", "go_goroutines 12\n", 0, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := parseWorkerMetrics(strings.NewReader(c.text))
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if m.Decided != c.decided || m.Concurrency != c.conc || m.CPUS != c.decided/100 || m.RSS != float64(c.conc<<20) {
				t.Errorf("got %+v, want decided %v, concurrency %d, CPU %v s, RSS %d MiB", m, c.decided, c.conc, c.decided/100, c.conc)
			}
		})
	}
}

// The sum keeps each pid's highest value: a worker that restarts its
// counter or stops does not make the total drop.
func TestMaxPerPID(t *testing.T) {
	var h maxPerPID
	steps := []struct {
		pid  int
		v    float64
		want float64
	}{
		{1, 10, 10},
		{2, 5, 15},
		{1, 20, 25},
		{1, 3, 25}, // lower than seen: ignored
		{3, 0, 25},
		{2, 6, 26},
	}
	for i, s := range steps {
		h.see(s.pid, s.v)
		if got := h.sum(); got != s.want {
			t.Fatalf("step %d: sum %v, want %v", i, got, s.want)
		}
	}
}

// The CPU sum is each pid's growth since its first reading: a worker
// first seen mid-run counts from there, one that stopped keeps its share.
func TestSpanPerPID(t *testing.T) {
	var c spanPerPID
	for _, s := range []struct {
		pid int
		v   float64
	}{{1, 10}, {1, 12}, {2, 3}, {1, 15}, {2, 4.5}, {1, 14}} {
		c.see(s.pid, s.v)
	}
	if got := c.sum(); got != 5+1.5 {
		t.Errorf("sum %v, want 6.5: pid 1 from 10 to 15, pid 2 from 3 to 4.5", got)
	}
}

// workerSampler reads the workers a /workers list names at each sample:
// a worker that scales in keeps counting what it handled, the running
// count and its peak follow the list, and the concurrency is read.
func TestWorkerSamplerFollowsTheList(t *testing.T) {
	var mu sync.Mutex
	handled := map[int]float64{}
	worker := func(pid int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprint(w, metricsText(handled[pid], 0, 1, 1, 0, 8))
		}))
	}
	w1, w2 := worker(1), worker(2)
	defer w1.Close()
	defer w2.Close()
	running := []workerProc{{PID: 1, Metrics: w1.URL + "/metrics"}}
	list := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_ = json.NewEncoder(w).Encode(running)
	}))
	defer list.Close()
	ws := &workerSampler{http: &http.Client{Timeout: 5 * time.Second}, list: list.URL}
	sample := func(wantHandled float64, wantRunning int) {
		t.Helper()
		h, n, err := ws.sample(t.Context())
		if err != nil || h != wantHandled || n != wantRunning {
			t.Fatalf("sample = %v, %d, %v; want %v, %d", h, n, err, wantHandled, wantRunning)
		}
	}
	set := func(f func()) { mu.Lock(); f(); mu.Unlock() }

	set(func() { handled[1] = 5 })
	sample(5, 1)
	set(func() {
		handled[1], handled[2] = 9, 4
		running = append(running, workerProc{PID: 2, Metrics: w2.URL + "/metrics"})
	})
	sample(13, 2)
	set(func() { handled[2] = 10; running = running[1:] }) // worker 1 scaled in
	sample(19, 1)
	if p := ws.peakWorkers(); p != 2 {
		t.Errorf("peak workers %d, want 2", p)
	}
	if c := ws.concurrency(10); c != 8 {
		t.Errorf("concurrency %d, want 8 (read from the workers)", c)
	}
	// Worker 1 went from 5 to 9 decided (0.05 to 0.09 s of CPU in
	// metricsText), worker 2 from 4 to 10.
	if cpu := ws.cpuSince(); cpu < 0.0999 || cpu > 0.1001 {
		t.Errorf("CPU since the start %v s, want 0.10", cpu)
	}
	ws.resetCPU()
	ws.resetPeak()
	sample(19, 1)
	if cpu := ws.cpuSince(); cpu != 0 {
		t.Errorf("CPU after a reset and one reading %v, want 0", cpu)
	}
	if p := ws.peakWorkers(); p != 1 {
		t.Errorf("peak workers after reset %d, want 1", p)
	}
}
