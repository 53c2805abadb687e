package asyncevent

import (
	"testing"
	"time"
)

// Budget.Parse reads N/s, N/m and N/h with N 1..MaxBudgetCount written
// plainly, "" as no budget, and refuses everything else.
func TestBudgetParse(t *testing.T) {
	for b, want := range map[Budget]struct {
		n   int
		per time.Duration
	}{"": {}, "1/s": {1, time.Second}, "30/m": {30, time.Minute}, "1000000/h": {1_000_000, time.Hour}} {
		n, per, err := b.Parse()
		if err != nil || n != want.n || per != want.per {
			t.Errorf("%q: %d per %v (%v), want %d per %v", b, n, per, err, want.n, want.per)
		}
	}
	for _, b := range []Budget{"0/m", "-1/m", "1000001/m", "2/d", "2", "/m", "02/m", "+2/m", " 2/m", "2/m ", "2/m/s", "off"} {
		if _, _, err := b.Parse(); err == nil {
			t.Errorf("%q parsed", b)
		}
	}
	if err := (EventLimits{ParticipationsPerAddress: "5/d"}).check(); err == nil {
		t.Error("an event with a bad budget checks")
	}
}
