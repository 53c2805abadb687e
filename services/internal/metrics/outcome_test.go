package metrics_test

import (
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// Each delivery outcome maps to one label; a waiting candidate is neither
// drained nor retried.
func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		out  asyncevent.Outcome
		want string
	}{
		{asyncevent.Outcome{Result: "retry"}, metrics.Retryable},
		{asyncevent.Outcome{Result: "allocating", Status: asyncevent.StatusProcessing}, metrics.Retryable},
		{asyncevent.Outcome{Ack: true, Result: "waiting", Status: asyncevent.StatusProcessing}, metrics.Waiting},
		{asyncevent.Outcome{Ack: true, Result: "succeeded", Status: asyncevent.StatusSucceeded}, metrics.Succeeded},
		{asyncevent.Outcome{Ack: true, Result: "collecting", Status: asyncevent.StatusProcessing}, metrics.Succeeded},
		{asyncevent.Outcome{Ack: true, Result: "done-already", Status: asyncevent.StatusRejected}, metrics.Rejected},
		{asyncevent.Outcome{Ack: true, Result: "failed", Status: asyncevent.StatusFailedFinal}, metrics.Final},
		{asyncevent.Outcome{Ack: true, Result: "bad-message"}, metrics.Final},
	} {
		if got := metrics.Outcome(c.out); got != c.want {
			t.Errorf("Outcome(%+v) = %q, want %q", c.out, got, c.want)
		}
	}
}
