package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// workerMetrics is what the load tool reads from a worker's /metrics (see
// docs/metrics.md): the deliveries it finished (pacer_worker_messages_total
// of every outcome but retryable) and its configured concurrency.
type workerMetrics struct {
	Handled     float64
	Concurrency int
}

// scrapeWorker reads url (a worker's ops /metrics).
func scrapeWorker(ctx context.Context, c *http.Client, url string) (workerMetrics, error) {
	var m workerMetrics
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return m, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	seen := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(name, "pacer_worker_messages_total{") && !strings.Contains(name, `outcome="retryable"`):
			m.Handled += v
			seen = true
		case name == "pacer_worker_concurrency":
			m.Concurrency = int(v)
		}
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if !seen {
		return m, fmt.Errorf("%s has no pacer_worker_messages_total", url)
	}
	return m, nil
}
