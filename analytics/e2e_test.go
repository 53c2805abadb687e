package analytics_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pacerhq/pacer/analytics"
	"github.com/pacerhq/pacer/internal/testbin"
	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// 500 participants, 100 seats, 3 workers, through the real stack (DynamoDB
// Local, the SQS stand-in, the stream publisher and its file sink): the
// SQL reports equal what is computed here independently from the Request
// items, exactly (the local percentile is exact).
func TestReportsMatchTheTable(t *testing.T) {
	const participants, seats = 500, 100
	env := asynceventtest.New(t, asynceventtest.Options{Stream: true})
	ctx := context.Background()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "race", EventType: asyncevent.FirstCome, Capacity: seats}); err != nil {
		t.Fatal(err)
	}
	// The publisher is the real binary (built in the root module with the
	// test's flags, see testbin), on the file sink.
	dir := t.TempDir()
	pub := exec.Command(testbin.Build(t, "..", "github.com/pacerhq/pacer/services/asyncevent-events"))
	pub.Env = append(os.Environ(), "PACER_ASYNCEVENT_TABLE="+env.DDB.Table.Name(), "PACER_ASYNCEVENT_SETUP=1",
		"PACER_EVENTS_CHECKPOINT_TABLE="+env.DDB.Table.Name()+"-cp", "PACER_EVENTS_SINK=file", "PACER_EVENTS_DIR="+dir, "PACER_EVENTS_OPS_ADDR=127.0.0.1:0",
		"PACER_EVENTS_BUFFER_INTERVAL=500ms", "PACER_EVENTS_POLL=50ms")
	pub.Stderr = os.Stderr
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pub.Process.Kill() }()
	env.StartWorkers(t, 3, consumer.Config{Concurrency: 8})

	ids := make([]string, participants)
	var wg sync.WaitGroup
	errs := make(chan error, participants)
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < participants; i += 8 {
				p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "race", UserID: fmt.Sprintf("runner-%03d", i)})
				if err != nil {
					errs <- err
					return
				}
				ids[i] = p.RequestID
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var reqs []*asyncevent.Request
	asynceventtest.Eventually(t, 3*time.Minute, "every request terminal", func() (bool, error) {
		reqs = reqs[:0]
		for _, id := range ids {
			r := env.Request(t, id)
			if !r.Status.Terminal() {
				return false, fmt.Errorf("%s is %s", id, r.Status)
			}
			reqs = append(reqs, r)
		}
		return true, nil
	})
	// Wait for the publisher to have written every processed event, then
	// stop it (which flushes the sink).
	asynceventtest.Eventually(t, time.Minute, "every processed event published", func() (bool, error) {
		db, err := analytics.Open(ctx, dir)
		if err != nil {
			return false, err
		}
		defer db.Close()
		tb, err := db.Run(ctx, analytics.Query{Name: "count", SQL: "SELECT count(DISTINCT detail.requestId) FROM events WHERE detail_type = 'ParticipationProcessed'"})
		if err != nil {
			return false, err
		}
		return analytics.Cell(tb.Rows[0][0]) == fmt.Sprint(participants), nil
	})
	if err := pub.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := pub.Wait(); err != nil {
		t.Fatalf("publisher: %v", err)
	}

	got := run(t, dir)
	want := expected(reqs)
	for name, rows := range want {
		if !slices.Equal(got[name], rows) {
			t.Errorf("%s:\n got %q\nwant %q", name, got[name], rows)
		}
	}
	t.Logf("reports: %v", got)
	files, _ := filepath.Glob(filepath.Join(dir, "events", "*", "*", "*"))
	t.Logf("%d objects written", len(files))
}

// expected computes every report from the Request items.
func expected(reqs []*asyncevent.Request) map[string][]string {
	hours := map[string]int{}
	status := map[asyncevent.Status]int{}
	var qd, e2e []int64
	var winners, losers []int64
	for _, r := range reqs {
		hours[time.UnixMilli(r.RequestedAt).UTC().Truncate(time.Hour).Format("2006-01-02 15:04:05")]++
		status[r.Status]++
		qd = append(qd, r.QueueDelay())
		e2e = append(e2e, r.E2EDelay())
		switch {
		case r.Status == asyncevent.StatusSucceeded:
			winners = append(winners, r.QueuedAt)
		case r.ResultCode == asyncevent.CodeRejectedCapacity:
			losers = append(losers, r.QueuedAt)
		}
	}
	var volume []string
	for h, n := range hours {
		volume = append(volume, fmt.Sprintf("race | %s | %d", h, n))
	}
	sort.Strings(volume)
	n := len(reqs)
	ratio := func(k int) string { return analytics.Cell(float64(int(float64(k)/float64(n)*10000+0.5)) / 10000) }
	inversions, early := 0, 0
	last := slices.Max(winners)
	for _, l := range losers {
		for _, w := range winners {
			if l < w {
				inversions++
			}
		}
		if l < last {
			early++
		}
	}
	delays := func(d []int64) string {
		return fmt.Sprintf("race | %d | %d | %d | %d", len(d), nearestRank(d, 0.5), nearestRank(d, 0.95), slices.Max(d))
	}
	return map[string][]string{
		"1_hourly_volume": volume,
		"2_outcome_ratios": {fmt.Sprintf("race | %d | %d | %d | %d | 0 | %s | %s | 0", n,
			status[asyncevent.StatusSucceeded], status[asyncevent.StatusRejected], status[asyncevent.StatusFailedFinal],
			ratio(status[asyncevent.StatusSucceeded]), ratio(status[asyncevent.StatusFailedFinal]))},
		"3_queue_delay_p95": {delays(qd)},
		"4_e2e_delay_p95":   {delays(e2e)},
		"5_fairness":        {fmt.Sprintf("race | %d | %d | %d | %d", len(winners), len(losers), inversions, early)},
	}
}

// nearestRank is the smallest value whose rank is at least p·n.
func nearestRank(v []int64, p float64) int64 {
	s := slices.Clone(v)
	slices.Sort(s)
	k := int(p*float64(len(s))+0.999999999) - 1
	return s[max(k, 0)]
}
