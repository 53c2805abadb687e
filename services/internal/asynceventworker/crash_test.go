package asynceventworker_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/testkit/proctest"
)

// TestMain runs the tests, or, in a child, a worker whose transactions are
// slow (so messages are in flight when the parent kills it) and, with
// holdAfterEnv set to n, that stops writing once it has decided n requests
// (holdAfterDecided), so that the parent finds it holding the rest.
func TestMain(m *testing.M) {
	var cfg asynceventworker.Config
	proctest.Main(m, standin.Config{DynamoDB: true, SQS: true}, "crash-worker", cfg.Declare, func(ctx context.Context, awsCfg aws.Config) error {
		cfg.AWS = &awsCfg
		slow := &asynceventtest.FaultyDynamo{Client: awsclient.DynamoDB(awsCfg)}
		slow.SetTxDelay(500 * time.Millisecond)
		if n, _ := strconv.Atoi(os.Getenv(holdAfterEnv)); n > 0 {
			slow.SetTxFault(holdAfterDecided(n))
		}
		cfg.DynamoDB = slow
		return asynceventworker.Run(ctx, cfg)
	})
}

// holdAfterEnv tells a crash-worker child to hold its writes after
// deciding that many requests.
const holdAfterEnv = "PACER_TEST_HOLD_AFTER_DECIDED"

// holdAfterDecided is a transaction hook that lets transactions through
// until they have decided n requests (written their SUCCEEDED or REJECTED
// status log; a retry of the same request counts once), then holds every
// later transaction until the process is killed: the worker keeps what it
// has received, in flight, whatever the machine's speed. The parent's
// precondition is then a state the child reaches and stays in, not a
// moment to catch.
func holdAfterDecided(n int) func(*dynamodb.TransactWriteItemsInput) error {
	var mu sync.Mutex
	decided := map[string]bool{}
	return func(in *dynamodb.TransactWriteItemsInput) error {
		mu.Lock()
		hold := len(decided) >= n
		if !hold {
			for _, it := range in.TransactItems {
				if it.Put == nil {
					continue
				}
				to, _ := it.Put.Item["toStatus"].(*types.AttributeValueMemberS)
				id, _ := it.Put.Item["requestId"].(*types.AttributeValueMemberS)
				if to != nil && id != nil && asyncevent.Status(to.Value).Terminal() {
					decided[id.Value] = true
				}
			}
		}
		mu.Unlock()
		if hold {
			time.Sleep(time.Hour) // until the parent's SIGKILL
		}
		return nil
	}
}

// A worker process killed with SIGKILL while messages are in flight:
// after the visibility timeout another worker finishes them; the invariant
// holds and nothing is stranded.
//
// Both orderings: with arrival (the default) the child holds candidates and
// may die holding the event's allocation lease; the new worker's allocator
// takes the event over when the lease expires, and the winners are exactly
// the first 20 by (queuedAt, requestId).
func TestWorkerKilledMidFlight(t *testing.T) {
	t.Parallel()
	for _, o := range []asyncevent.Ordering{asyncevent.OrderDelivery, asyncevent.OrderArrival} {
		t.Run(string(o), func(t *testing.T) {
			t.Parallel()
			workerKilledMidFlight(t, o)
		})
	}
}

func workerKilledMidFlight(t *testing.T, ordering asyncevent.Ordering) {
	// The default maxReceiveCount (4: three processing receives, and a
	// last one that records a vanished worker) holds for arrival too: a candidate's
	// message waiting for the allocator (here for the dead child's lease
	// to expire) is continued, not redelivered, so waiting costs no
	// receive (docs/fairness.md, "arrival and the DLQ").
	opts := asynceventtest.Options{}
	env := asynceventtest.New(t, opts)
	ctx := context.Background()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 20, Ordering: ordering}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 60 {
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%02d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.RequestID)
	}
	child := proctest.Start(t,
		"PACER_ASYNCEVENT_TABLE="+env.DDB.Table.Name(), "PACER_ASYNCEVENT_QUEUE="+env.QueueName, "PACER_ASYNCEVENT_SETUP=0",
		"PACER_WORKER_CONCURRENCY=10", "PACER_WORKER_OPS_ADDR=127.0.0.1:0", "PACER_WORKER_VISIBILITY=3s", "PACER_WORKER_WAIT=1s",
		holdAfterEnv+"=5")

	// The child decides at least 5 requests, then holds every write: it
	// keeps what it received in flight until killed. (Sampling for a
	// moment with some decided and some in flight missed it on a loaded
	// CI machine: the child decided all 60 between two samples.) One
	// decision transaction may decide up to 49 (MaxAllocBatch), so some
	// of the 60 are always left.
	var atKill *asyncevent.Stats
	started := time.Now()
	asynceventtest.Eventually(t, time.Minute, "the child to decide some requests and hold the rest", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "ev")
		if err != nil {
			return false, err
		}
		done := st.ByStatus[asyncevent.StatusSucceeded] + st.ByStatus[asyncevent.StatusRejected]
		atKill = st
		if done >= 5 && done < len(ids) {
			return true, nil
		}
		return false, fmt.Errorf("stats %v", st.ByStatus)
	})
	child.Kill()
	st, _ := env.Admin.EventStats(ctx, "ev")
	t.Logf("killed the worker %s after it started: %v (PROCESSING at kill: %d)", time.Since(started).Round(100*time.Millisecond), st.ByStatus, atKill.ByStatus[asyncevent.StatusProcessing])
	if !st.InvariantOK {
		t.Fatalf("invariant broken right after the kill: %+v", st)
	}
	// Messages the child had received are invisible until the visibility
	// timeout; requests it had taken may be left PROCESSING (whether any
	// are depends on where the kill lands; TestRedeliveryIsIdempotent in
	// modules/asyncevent covers that path deterministically).

	start := time.Now()
	// The child's 3 s visibility brings its messages back; this worker's
	// own can be long. A message the slow child already received twice
	// reaches it on its last processing receive (the third), and
	// must not come back while this worker, on a loaded machine, decides it.
	env.StartWorkers(t, 1, consumer.Config{Visibility: 15 * time.Second})
	count := map[asyncevent.ResultCode]int{}
	var final []*asyncevent.Request
	asynceventtest.Eventually(t, 90*time.Second, "every request to finish", func() (bool, error) {
		count, final = map[asyncevent.ResultCode]int{}, nil
		for _, id := range ids {
			r, err := env.Store.GetRequest(ctx, id)
			if err != nil {
				return false, err
			}
			if !r.Status.Terminal() {
				main, dead, _ := env.Queue.Depths(ctx)
				return false, fmt.Errorf("%s is %s %s (queue %d, DLQ %d)", id, r.Status, r.UIPhase, main, dead)
			}
			count[r.ResultCode]++
			final = append(final, r)
		}
		return true, nil
	})
	if ordering == asyncevent.OrderArrival {
		slices.SortFunc(final, func(a, b *asyncevent.Request) int { return asyncevent.PositionOf(a).Compare(asyncevent.PositionOf(b)) })
		for i, r := range final {
			if won := r.ResultCode == asyncevent.CodeSuccess; won != (i < 20) {
				t.Fatalf("request %d in (queuedAt, requestId) order, %s, has %s", i, r.RequestID, r.ResultCode)
			}
		}
	}
	t.Logf("the new worker finished the rest in %s", time.Since(start).Round(100*time.Millisecond))
	if count[asyncevent.CodeSuccess] != 20 || count[asyncevent.CodeRejectedCapacity] != 40 {
		t.Fatalf("results %v, want 20 SUCCESS + 40 REJECTED_CAPACITY", count)
	}
	st, err := env.Admin.EventStats(ctx, "ev")
	if err != nil || !st.InvariantOK || st.CapacityRemaining != 0 {
		t.Fatalf("stats %+v %v", st, err)
	}
	// An arrival candidate's message is acked by its next delivery after
	// the decision: this worker's visibility (15 s) away at most.
	asynceventtest.Eventually(t, 30*time.Second, "the queues to be empty", func() (bool, error) {
		main, dead, err := env.Queue.Depths(ctx)
		return main == 0 && dead == 0, err
	})
}

// SIGTERM stops a worker gracefully: it finishes and deletes what it holds.
func TestGracefulStop(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	ctx := context.Background()
	// Delivery ordering: a worker finishes what it took. (An arrival
	// candidate is finished by the allocator, whoever runs it; its message
	// stays on the queue until then, as TestWorkerKilledMidFlight/arrival
	// shows.)
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev", EventType: asyncevent.FirstCome, Capacity: 100, Ordering: asyncevent.OrderDelivery}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "ev", UserID: fmt.Sprintf("u%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	child := proctest.Start(t,
		"PACER_ASYNCEVENT_TABLE="+env.DDB.Table.Name(), "PACER_ASYNCEVENT_QUEUE="+env.QueueName, "PACER_ASYNCEVENT_SETUP=0",
		"PACER_WORKER_CONCURRENCY=5", "PACER_WORKER_VISIBILITY=30s", "PACER_WORKER_WAIT=1s")
	asynceventtest.Eventually(t, 30*time.Second, "some requests in flight", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "ev")
		return err == nil && st.ByStatus[asyncevent.StatusProcessing] > 0, err
	})
	if err := child.Stop(); err != nil {
		t.Fatalf("worker exit: %v", err)
	}
	// Everything it took is finished (no PROCESSING left behind), and with
	// a 30 s visibility timeout nothing it finished can still be pending
	// deletion: queue depth equals the requests still QUEUED.
	st, err := env.Admin.EventStats(ctx, "ev")
	if err != nil || st.ByStatus[asyncevent.StatusProcessing] != 0 {
		t.Fatalf("after SIGTERM: %+v %v", st, err)
	}
	if n, err := env.Queue.Depth(ctx); err != nil || n != st.ByStatus[asyncevent.StatusQueued] {
		t.Fatalf("queue depth %d (%v), %d requests still QUEUED", n, err, st.ByStatus[asyncevent.StatusQueued])
	}
}
