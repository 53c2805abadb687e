package analytics

import (
	"fmt"
	"testing"
	"time"
	"unicode/utf8"
)

// The charts stay legible at 25 events with long ids: every bar has a row
// of its own, so no two labels share a line, each label fits its column,
// and the rows still tell the events apart.
func TestChartsLegibleWithManyEvents(t *testing.T) {
	hour := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	volume := Result{Query: Query{Name: "1_hourly_volume", Title: "Hourly volume"}, Table: &Table{Columns: []string{"event_id", "hour_utc", "requests"}}}
	delay := Result{Query: Query{Name: "3_queue_delay_p95", Title: "Queue delay"}, Table: &Table{Columns: []string{"event_id", "p50_ms", "p95_ms"}}}
	const events = 25
	for i := range events {
		id := fmt.Sprintf("seoul-city-marathon-2026-registration-wave-%02d", i)
		volume.Table.Rows = append(volume.Table.Rows, []any{id, hour, float64(100 + i)})
		delay.Table.Rows = append(delay.Table.Rows, []any{id, float64(10 * i), float64(20 * i)})
	}
	cs := charts([]Result{volume, delay})
	if len(cs) != 2 {
		t.Fatalf("%d charts, want 2", len(cs))
	}
	for _, c := range cs {
		seen := map[string]bool{}
		for i, b := range c.Bars {
			if n := utf8.RuneCountInString(b.Short); n > maxLabel || float64(n)*6.5 > labelWidth {
				t.Errorf("%s: label %q is %d characters: wider than its column", c.Title, b.Short, n)
			}
			if seen[b.Short] {
				t.Errorf("%s: two rows read %q", c.Title, b.Short)
			}
			seen[b.Short] = true
			if i > 0 && b.TextY-c.Bars[i-1].TextY < 12 { // 11 px text
				t.Errorf("%s: rows %d and %d are %.0f px apart: their labels overlap", c.Title, i-1, i, b.TextY-c.Bars[i-1].TextY)
			}
			if b.Y+b.H > c.Height || b.TextX+40 > c.Width {
				t.Errorf("%s: bar %d (%+v) does not fit the %.0f×%.0f chart", c.Title, i, b, c.Width, c.Height)
			}
		}
	}
	if got := len(cs[1].Bars); got != 2*events {
		t.Fatalf("delay chart: %d bars, want p50 and p95 of %d events", got, events)
	}
}
