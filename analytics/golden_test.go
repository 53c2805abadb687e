package analytics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics/schematest"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
)

// run runs every query on the events under dir and renders each row as
// its values joined by " | " (times in UTC).
func run(t *testing.T, dir string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	db, err := analytics.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]string{}
	for _, q := range analytics.Queries() {
		tb, err := db.Run(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tb.Rows {
			var cells []string
			for _, v := range r {
				cells = append(cells, analytics.Cell(v))
			}
			out[q.Name] = append(out[q.Name], strings.Join(cells, " | "))
		}
	}
	return out
}

// The golden event set (testdata/golden, 23 lines, written as Firehose
// writes them) holds two events, all times from 2026-11-26 09:00:00 UTC:
//
//	fc, FIRST_COME, capacity 2: (requested, queued, started, finished ms after 09:00)
//	  r1 (0, 10, 110, 120) SUCCEEDED         queue 100, e2e 110
//	  r2 (1, 20, 220, 230) REJECTED_CAPACITY queue 200, e2e 210
//	  r3 (2, 30, 330, 400) SUCCEEDED         queue 300, e2e 370
//	  r4 (10:00:00.001, +9, +49, +59) REJECTED_CAPACITY queue 40, e2e 50
//	  r5 (4, 40): two retryable failures, the second dead-lettered; never finished
//	lt, LOTTERY:
//	  l1 (5, 50, 60, 11:00:00.000) LOTTERY_WIN queue 10, e2e 7199950
//	  l2 (6): enqueue failed at 7: FAILED_FINAL, no delay
//
// r1's processed and r3's delay events are in the set twice (redelivered).
//
// By hand:
//   - volume: fc 4 at 09:00 (r1 r2 r3 r5), 1 at 10:00 (r4); lt 2 at 09:00.
//   - fc: 5 requests, 2 succeeded, 2 rejected, 0 failed, 1 DLQ: 0.4, 0, 0.2.
//     lt: 2 requests, 1 succeeded, 1 failed: 0.5, 0.5, DLQ 0.
//   - percentiles are nearest-rank (the smallest value with rank ≥ p·n):
//     fc queue delays 40 100 200 300: p50 = 2nd = 100, p95 = 4th = 300;
//     fc e2e 50 110 210 370: p50 110, p95 370. Counted once each despite
//     r3's duplicate, which would otherwise make 5 measured.
//   - fairness fc: winners queued at 10 and 30, losers at 20 and 3600010:
//     one inversion (r2 queued before r3 yet lost), one loser (r2) queued
//     before the last winner.
func TestGoldenResults(t *testing.T) {
	got := run(t, "testdata/golden")
	want := map[string][]string{
		"1_hourly_volume": {
			"fc | 2026-11-26 09:00:00 | 4",
			"fc | 2026-11-26 10:00:00 | 1",
			"lt | 2026-11-26 09:00:00 | 2",
		},
		"2_outcome_ratios": {
			"fc | 5 | 2 | 2 | 0 | 1 | 0.4 | 0 | 0.2",
			"lt | 2 | 1 | 0 | 1 | 0 | 0.5 | 0.5 | 0",
		},
		"3_queue_delay_p95": {"fc | 4 | 100 | 300 | 300", "lt | 1 | 10 | 10 | 10"},
		"4_e2e_delay_p95":   {"fc | 4 | 110 | 370 | 370", "lt | 1 | 7199950 | 7199950 | 7199950"},
		"5_fairness":        {"fc | 2 | 2 | 1 | 1"},
	}
	for name, rows := range want {
		if !slices.Equal(got[name], rows) {
			t.Errorf("%s:\n got %q\nwant %q", name, got[name], rows)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d queries ran, want %d", len(got), len(want))
	}
}

// Every line of the golden set is a valid event (the set is a fair
// stand-in for what the publisher writes).
func TestGoldenSetFollowsTheSchema(t *testing.T) {
	objs, err := filesink.Read("testdata/golden")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range objs {
		for _, line := range o.Lines {
			n++
			if err := schematest.ValidateJSON(line); err != nil {
				t.Errorf("%s: %v", o.Path, err)
			}
		}
	}
	if n != 23 {
		t.Errorf("%d lines, want 23", n)
	}
}

// The DDL's detail struct has exactly the schema's detail properties, and
// DuckDB accepts the DDL's column types (Open builds its view from them).
func TestDDLMatchesTheSchema(t *testing.T) {
	cols, err := analytics.Columns(analytics.DDL())
	if err != nil {
		t.Fatal(err)
	}
	var detail, keys []string
	for _, c := range cols {
		keys = append(keys, c.Key)
		if c.Name == "detail" {
			for _, f := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(c.Type, "STRUCT("), ")"), ", ") {
				name, _, _ := strings.Cut(f, " ")
				detail = append(detail, strings.Trim(name, `"`))
			}
		}
	}
	b, err := os.ReadFile(schematest.Path())
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any
		Defs       struct {
			Detail struct{ Properties map[string]any } `json:"detail"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	if want := sortedKeys(schema.Defs.Detail.Properties); fmt.Sprint(sortedCopy(detail)) != fmt.Sprint(want) {
		t.Errorf("DDL detail fields %v\n schema's %v", sortedCopy(detail), want)
	}
	if want := sortedKeys(schema.Properties); fmt.Sprint(sortedCopy(keys)) != fmt.Sprint(want) {
		t.Errorf("DDL columns read from %v\n schema's %v", sortedCopy(keys), want)
	}
	if _, err := analytics.Columns(strings.Replace(analytics.DDL(), "bigint", "bignum", 1)); err == nil {
		t.Error("an unknown Hive type was accepted")
	}
}

func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedCopy(s []string) []string { s = slices.Clone(s); sort.Strings(s); return s }
