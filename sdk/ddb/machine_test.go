package ddb_test

import (
	"errors"
	"testing"

	"github.com/pacerhq/pacer/sdk/ddb"
)

func TestMachine(t *testing.T) {
	if lifecycle.Attr() != "status" {
		t.Fatalf("Attr = %q", lifecycle.Attr())
	}
	cases := []struct {
		from, to status
		allowed  bool
	}{
		{received, queued, true},
		{queued, processing, true},
		{processing, succeeded, true},
		{processing, rejected, true},
		{received, succeeded, false}, // skipping states
		{queued, received, false},    // backwards
		{succeeded, processing, false},
		{received, received, false}, // self loop not declared
		{"UNKNOWN", queued, false},
	}
	for _, c := range cases {
		if got := lifecycle.Allowed(c.from, c.to); got != c.allowed {
			t.Errorf("Allowed(%s → %s) = %v, want %v", c.from, c.to, got, c.allowed)
		}
	}
	terminal := map[status]bool{received: false, queued: false, processing: false, succeeded: true, rejected: true, "UNKNOWN": true}
	for s, want := range terminal {
		if got := lifecycle.Terminal(s); got != want {
			t.Errorf("Terminal(%s) = %v, want %v", s, got, want)
		}
	}
}

// Transition refuses undeclared moves and empty sources without a table:
// the error is ready before Run.
func TestTransitionRefusesBeforeAnyCall(t *testing.T) {
	db := ddb.New(nil, ddb.Config{}) // a nil client: any call would panic
	reqs, _ := entities(db.Table("t", &schema))
	ctx := t.Context()
	for name, u := range map[string]*ddb.Update{
		"undeclared":   ddb.Transition(reqs, requestKey("r"), lifecycle, succeeded, received),
		"one bad from": ddb.Transition(reqs, requestKey("r"), lifecycle, processing, queued, received),
		"no from":      ddb.Transition(reqs, requestKey("r"), lifecycle, queued),
	} {
		if err := u.Run(ctx); !errors.Is(err, ddb.ErrTransition) {
			t.Errorf("%s: want ErrTransition, got %v", name, err)
		}
	}
}
