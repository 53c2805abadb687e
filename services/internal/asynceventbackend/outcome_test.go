package asynceventbackend

import (
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// Each delivery outcome maps to one label; a waiting candidate is neither
// drained nor retried.
func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		out  asyncevent.Outcome
		want string
	}{
		{asyncevent.Outcome{Result: "retry"}, Retryable},
		{asyncevent.Outcome{Result: "allocating", Status: asyncevent.StatusProcessing}, Retryable},
		{asyncevent.Outcome{Ack: true, Result: "waiting", Status: asyncevent.StatusProcessing}, Waiting},
		{asyncevent.Outcome{Ack: true, Result: "succeeded", Status: asyncevent.StatusSucceeded}, Succeeded},
		{asyncevent.Outcome{Ack: true, Result: "collecting", Status: asyncevent.StatusProcessing}, Succeeded},
		{asyncevent.Outcome{Ack: true, Result: "done-already", Status: asyncevent.StatusRejected}, Rejected},
		{asyncevent.Outcome{Ack: true, Result: "failed", Status: asyncevent.StatusFailedFinal}, Final},
		{asyncevent.Outcome{Ack: true, Result: "bad-message"}, Final},
	} {
		if got := Outcome(c.out); got != c.want {
			t.Errorf("Outcome(%+v) = %q, want %q", c.out, got, c.want)
		}
	}
}
