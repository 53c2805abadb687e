package asyncevent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// adversary is the reordering the fairness tests deliver under: shuffled
// within 64 messages, delayed up to 300 ms, 5% duplicated, 5% of acks lost
// (redelivered after the visibility timeout), handled with random delays
// up to 15 ms by 3 workers of 10 handlers each.
func adversary(seed uint64, users int) asynceventtest.Adversarial {
	return asynceventtest.Adversarial{
		Users: users, Workers: 3, Ingesters: 32, MaxHandleDelay: 15 * time.Millisecond,
		Reorder: asynceventtest.Reorder{Seed: seed, Window: 64, MaxDelay: 300 * time.Millisecond, Duplicate: 0.05, LoseAck: 0.05},
	}
}

// The seed's per-message design ("delivery" ordering) under adversarial
// delivery: exactly N winners, but the winners are not the first N by
// queuedAt. The inversions are this design's measurement (see
// docs/fairness.md); that there are some shows the harness reorders.
func TestAdversarialDeliveryOrder(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		env := asynceventtest.New(t, asynceventtest.Options{})
		id := fmt.Sprintf("ev%d", seed)
		firstCome(t, env, id, 100)
		res := env.RunAdversarial(t, id, adversary(seed, 500))
		t.Logf("delivery order, seed %d: %s; queue %+v; %s", seed, res.Fairness, res.Queue, res.Elapsed.Round(time.Millisecond))
		if res.Winners != 100 || res.Losers != 400 {
			t.Errorf("seed %d: %s, want 100 winners and 400 losers", seed, res.Fairness)
		}
		if res.Inversions == 0 {
			t.Errorf("seed %d: no inversions: the harness did not reorder", seed)
		}
	}
}
