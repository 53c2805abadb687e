package asyncevent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/ddb"
)

var ctx = context.Background()

// firstCome creates a FIRST_COME event with the delivery ordering: the
// worker tests here exercise the per-message decision (Process's outcome,
// retries, crash windows, call counts). The default ordering, arrival, has
// its own tests (allocate_test.go, fairness_test.go) and is what the
// services' tests create.
func firstCome(t *testing.T, env *asynceventtest.Env, id string, capacity int64) *asyncevent.EventConfig {
	t.Helper()
	cfg, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: id, EventType: asyncevent.FirstCome, Capacity: capacity,
		Ordering: asyncevent.OrderDelivery, ClosesAt: time.Now().Add(24 * time.Hour).UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func participate(t testing.TB, in *asyncevent.Ingest, eventID, userID string) asyncevent.Participation {
	t.Helper()
	p, err := in.Participate(ctx, asyncevent.ParticipateInput{EventID: eventID, UserID: userID})
	if err != nil {
		t.Fatalf("participate %s/%s: %v", eventID, userID, err)
	}
	return p
}

// failEnqueue is userID's participation in eventID made while SQS
// refuses every send: FAILED_FINAL / FAILED_INGEST_ENQUEUE.
func failEnqueue(t testing.TB, env *asynceventtest.Env, eventID, userID string) asyncevent.Participation {
	t.Helper()
	env.SQS.SetSendFault(asynceventtest.Throttle)
	defer env.SQS.SetSendFault(nil)
	return participate(t, env.Ingest, eventID, userID)
}

// participateAtOnce makes n participations p through in, all started at
// once, and returns their answers and errors.
func participateAtOnce(in *asyncevent.Ingest, p asyncevent.ParticipateInput, n int) ([]asyncevent.Participation, []error) {
	var wg sync.WaitGroup
	results := make([]asyncevent.Participation, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = in.Participate(ctx, p)
		})
	}
	close(start)
	wg.Wait()
	return results, errs
}

// waitTerminal waits until every request is terminal.
func waitTerminal(t *testing.T, env *asynceventtest.Env, ids []string, timeout time.Duration) []*asyncevent.Request {
	t.Helper()
	out := make([]*asyncevent.Request, len(ids))
	asynceventtest.Eventually(t, timeout, fmt.Sprintf("%d requests to finish", len(ids)), func() (bool, error) {
		for i, id := range ids {
			if out[i] != nil && out[i].Status.Terminal() {
				continue
			}
			r, err := env.Store.GetRequest(ctx, id)
			if err != nil {
				return false, err
			}
			out[i] = r
			if !r.Status.Terminal() {
				return false, fmt.Errorf("%s is %s", id, r.Status)
			}
		}
		return true, nil
	})
	return out
}

// rawItem reads an item as stored.
func rawItem(t *testing.T, env *asynceventtest.Env, pk, sk string) ddb.Item {
	t.Helper()
	it, err := env.DDB.Table.GetStrong(ctx, ddb.Key{PK: pk, SK: sk})
	if err != nil {
		t.Fatalf("get %s / %s: %v", pk, sk, err)
	}
	return it
}

func str(it ddb.Item, a string) string {
	if s, ok := it[a].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func num(it ddb.Item, a string) string {
	if n, ok := it[a].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

// countItems scans the table for items of an entity type.
func countItems(t *testing.T, env *asynceventtest.Env, entityType string) int {
	t.Helper()
	n := 0
	p := dynamodb.NewScanPaginator(env.DDB.Client, &dynamodb.ScanInput{
		TableName:                 aws.String(env.DDB.Table.Name()),
		FilterExpression:          aws.String("entityType = :t"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: entityType}},
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(out.Items)
	}
	return n
}

// checkLogs checks that a request's StatusLog is a chain of declared
// transitions (or operator re-queues, FAILED_FINAL → RECEIVED) from
// RECEIVED ending at its current status.
func checkLogs(t *testing.T, env *asynceventtest.Env, r *asyncevent.Request) {
	t.Helper()
	logs, err := env.Store.Logs(ctx, r.RequestID)
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) == 0 || logs[0].ToStatus != asyncevent.StatusReceived || logs[0].FromStatus != "" {
		t.Fatalf("%s: log does not start with → RECEIVED: %+v", r.RequestID, logs)
	}
	for i := 1; i < len(logs); i++ {
		reopen := logs[i].FromStatus == asyncevent.StatusFailedFinal && logs[i].ToStatus == asyncevent.StatusReceived && logs[i].Message == "operator re-queue"
		if logs[i].FromStatus != logs[i-1].ToStatus || !(reopen || logs[i].FromStatus.CanMoveTo(logs[i].ToStatus)) {
			t.Fatalf("%s: log breaks at %d: %s → %s after → %s", r.RequestID, i, logs[i].FromStatus, logs[i].ToStatus, logs[i-1].ToStatus)
		}
	}
	if last := logs[len(logs)-1]; last.ToStatus != r.Status {
		t.Fatalf("%s: log ends at %s, request is %s", r.RequestID, last.ToStatus, r.Status)
	}
}

// hookEvents wraps an EventReader to run another actor's step after each
// GetEvent, before it returns, so that a test injects an interleaving
// deterministically.
type hookEvents struct {
	asyncevent.EventReader
	afterGetEvent func()
}

func (h *hookEvents) GetEvent(ctx context.Context, id string, strong bool) (*asyncevent.EventConfig, error) {
	cfg, err := h.EventReader.GetEvent(ctx, id, strong)
	if h.afterGetEvent != nil {
		h.afterGetEvent()
	}
	return cfg, err
}

// hookSweep wraps a SweepStore (an Operations') to run another actor's
// step at a chosen point.
type hookSweep struct {
	asyncevent.SweepStore
	// afterTransition runs after each Transition that succeeded.
	afterTransition func(t *asyncevent.Transition)
	// beforeReopen runs just before ReopenFailedEnqueue.
	beforeReopen func(requestID string)
}

func (h *hookSweep) ReopenFailedEnqueue(ctx context.Context, r asyncevent.Reopen) error {
	if h.beforeReopen != nil {
		h.beforeReopen(r.RequestID)
	}
	return h.SweepStore.ReopenFailedEnqueue(ctx, r)
}

func (h *hookSweep) Transition(ctx context.Context, t *asyncevent.Transition) error {
	err := h.SweepStore.Transition(ctx, t)
	if err == nil && h.afterTransition != nil {
		h.afterTransition(t)
	}
	return err
}

// operations is an Operations over env's store and queue, with requests
// as its SweepStore.
func operations(env *asynceventtest.Env, requests asyncevent.SweepStore) *asyncevent.Operations {
	c := env.OperationsConfig()
	c.Requests = requests
	return asyncevent.NewOperations(c)
}
