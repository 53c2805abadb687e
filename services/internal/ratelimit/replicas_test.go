package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) { standin.RunTests(m, standin.Config{DynamoDB: true}) }

// clock is a settable clock shared by a test's replicas and limiters.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fleet is one API's replicas: each a Replicas counter in the test's
// table and a Limiter whose shares follow it.
type fleet struct {
	t     *testing.T
	table *ddb.Table
	group string
	clock *clock
	rule  Rule
	reps  []*Replicas
	lims  []*Limiter
}

// replicasTable is the tests' one replicas table (each fleet is a
// group of its own in it): DynamoDB Local takes a while per table.
var replicasTable = sync.OnceValues(func() (*ddb.Table, error) {
	ctx := context.Background()
	cfg, err := awsclient.Load(ctx)
	if err != nil {
		return nil, err
	}
	table := ddb.New(awsclient.DynamoDB(cfg), ddb.Config{}).Table(fmt.Sprintf("replicas-%d", time.Now().UnixNano()), &ReplicaSchema)
	return table, table.Ensure(ctx)
})

func newFleet(t *testing.T, rule Rule) *fleet {
	t.Helper()
	table, err := replicasTable()
	if err != nil {
		t.Fatalf("the replicas table on DynamoDB Local (make deps installs it): %v", err)
	}
	return &fleet{t: t, table: table, group: fmt.Sprintf("api-%d", time.Now().UnixNano()), clock: &clock{t: time.Unix(1_800_000_000, 0)}, rule: rule}
}

// fair is what n replicas together allow at once of a burst: each its
// share, at least 1.
func fair(burst, n int) int { return n * max(1, (burst+n-1)/n) }

// start adds n replicas, each beating once.
func (f *fleet) start(n int) {
	f.t.Helper()
	for range n {
		r := NewReplicas(ReplicasConfig{Table: f.table, Group: f.group, ID: fmt.Sprint("r", len(f.reps)), Every: time.Second, Now: f.clock.Now})
		f.reps = append(f.reps, r)
		f.lims = append(f.lims, New(Config{Rules: map[string]map[By]Rule{"c": {ByUser: f.rule}}, Count: r.Count, Now: f.clock.Now}))
		f.beat(len(f.reps) - 1)
	}
}

func (f *fleet) beat(i int) {
	f.t.Helper()
	if err := f.reps[i].Beat(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// burst is how many calls one new user gets at once from the fleet's
// replicas from..to-1, sent to each in turn as a load balancer spreads
// them, until every replica refuses.
func (f *fleet) burst(user string, from, to int) int {
	n := 0
	for {
		got := 0
		for i := from; i < to; i++ {
			if ok, _ := f.lims[i].Allow("c", user, ""); ok {
				got++
			}
		}
		if got == 0 {
			return n
		}
		n += got
	}
}

// The replicas count each other: a replica counts itself and every peer
// heard from within Expiry, in its own group only.
func TestReplicasCountEachOther(t *testing.T) {
	f := newFleet(t, Rule{Rate: 1, Burst: 1})
	if c := NewReplicas(ReplicasConfig{Table: f.table, Group: f.group, ID: "new"}).Count(); c != 1 {
		t.Errorf("before its first beat a replica counts %d, want 1 (itself)", c)
	}
	f.start(3)
	if got := []int{f.reps[0].Count(), f.reps[1].Count(), f.reps[2].Count()}; got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Errorf("counts after each one's first beat %v, want [1 2 3]", got)
	}
	other := NewReplicas(ReplicasConfig{Table: f.table, Group: "another-api", ID: "x", Now: f.clock.Now})
	if err := other.Beat(context.Background()); err != nil || other.Count() != 1 {
		t.Errorf("another group counts %d (%v), want 1", other.Count(), err)
	}
	f.beat(0)
	if c := f.reps[0].Count(); c != 3 {
		t.Errorf("count %d, want 3", c)
	}
	// Replica 2 stops beating: past its expiry (3 × Every) it no longer
	// counts.
	f.clock.Add(2 * time.Second)
	f.beat(0)
	f.beat(1)
	if c := f.reps[0].Count(); c != 3 {
		t.Errorf("within the expiry: count %d, want 3", c)
	}
	f.clock.Add(1500 * time.Millisecond)
	f.beat(0)
	if c := f.reps[0].Count(); c != 2 {
		t.Errorf("past replica 2's expiry: count %d, want 2", c)
	}
}

// A user's budget holds at any replica count: the replicas together allow
// one new user the budget's burst, plus at most one call per replica
// where the burst does not divide evenly (each replica allows at least
// one), so at most max(B+n-1, n) for a burst B over n replicas
// (docs/ratelimit.md); while a scale-out is being counted (new replicas
// count everyone at once, the others within one beat) at most twice the
// budget; after a scale-in, the budget once the gone replicas expire. A
// fixed count (the old PACER_RATE_REPLICAS) gives n/fixed times the
// budget instead.
func TestBudgetHoldsAtAnyReplicaCount(t *testing.T) {
	const burst = 60
	for _, n := range []int{1, 2, 3, 7, 36} {
		f := newFleet(t, Rule{Rate: burst / 3600.0, Burst: burst})
		f.start(n)
		for i := range n {
			f.beat(i) // everyone counts everyone
		}
		want := fair(burst, n)
		if got := f.burst("u", 0, n); got != want || got > max(burst+n-1, n) || got > 2*burst {
			t.Errorf("%d replicas: a user got %d calls at once, want %d (at most %d, and twice the budget %d)", n, got, want, max(burst+n-1, n), 2*burst)
		}
	}

	f := newFleet(t, Rule{Rate: burst / 3600.0, Burst: burst})
	f.start(4)
	for i := range 4 {
		f.beat(i)
	}
	f.start(4) // scale-out: the new ones count 8 at once (the last one; the
	// earlier ones fewer), the old ones still 4
	mid := f.burst("during", 0, 8)
	if mid > 2*burst {
		t.Errorf("during a scale-out to 8: a user got %d calls, more than twice the budget %d", mid, burst)
	}
	for i := range 8 {
		f.beat(i)
	}
	if got := f.burst("after", 0, 8); got != fair(burst, 8) {
		t.Errorf("after the scale-out, counted: %d calls, want %d", got, fair(burst, 8))
	}
	// Scale-in: 0..3 stop. The survivors count 8 until the others expire
	// (allowing less than the budget meanwhile), then 4.
	f.clock.Add(2 * time.Second)
	for i := 4; i < 8; i++ {
		f.beat(i)
	}
	if got := f.burst("shrinking", 4, 8); got > fair(burst, 4) {
		t.Errorf("during a scale-in: %d calls, more than %d", got, fair(burst, 4))
	}
	f.clock.Add(2 * time.Second)
	for i := 4; i < 8; i++ {
		f.beat(i)
	}
	if got := f.burst("shrunk", 4, 8); got != fair(burst, 4) {
		t.Errorf("after the scale-in: %d calls, want %d", got, fair(burst, 4))
	}
	t.Logf("a user's burst of %d: %d during a scale-out from 4 to 8 replicas; a fixed count of 2 at 36 replicas would allow %d",
		burst, mid, 36*burst/2)

	// Buckets already made take the new share: a user's bucket made when
	// 4 counted allows 1/8 of the budget once 8 count.
	g := newFleet(t, Rule{Rate: burst / 3600.0, Burst: burst})
	g.start(4)
	for i := range 4 {
		g.beat(i)
	}
	if ok, _ := g.lims[0].Allow("c", "early", ""); !ok {
		t.Fatal("a first call refused")
	}
	g.start(4)
	g.beat(0)
	n := 1
	for ok, _ := g.lims[0].Allow("c", "early", ""); ok; ok, _ = g.lims[0].Allow("c", "early", "") {
		n++
	}
	if n > burst/4 || n < burst/8 {
		t.Errorf("a bucket made at 4 replicas allowed %d calls once 8 counted, want between %d and %d", n, burst/8, burst/4)
	}
}
