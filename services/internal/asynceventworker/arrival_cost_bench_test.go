package asynceventworker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/internal/awsfixture"
	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/awsclient"
)

// The arrival allocator's cost benchmark: one Allocate run of a FIRST_COME
// `arrival` event deciding one full batch (asyncevent.MaxAllocBatch
// requests: arrivalSeats win, the rest are REJECTED_CAPACITY), Pacer's
// Allocator as Run builds it against bareAllocator, both over
// internal/awsfixture: impl=pacer / impl=bare is Pacer's overhead per run
// (make bench prints it); divide by decisions/op for a decision's.

const (
	// arrivalSeats are the seats the lease's capacity item shows left, the
	// same every run: every run has winners and rejections.
	arrivalSeats = 20
	// arrivalFence is the fencing token the lease's capacity item shows.
	arrivalFence = 7
	// arrivalCalls are one run's AWS calls: the lease, the candidates'
	// Query and BatchGetItem (GSI2 projects only keys), the transaction,
	// the read of the next batch (an empty page), the release.
	arrivalCalls = 6
)

// arrivalQueued is when the first candidate was queued: an hour ago, far
// below the watermark (now − Lateness.Max).
var arrivalQueued = time.Now().Add(-time.Hour).UnixMilli()

// arrivalID is the i-th candidate's request id; i = -1 is the allocator's
// position, decided before them.
func arrivalID(i int) string { return fmt.Sprintf("01M8FFQ73T18893C7W07K%05d", i+1) }

// arrivalCandidate is the i-th candidate, PROCESSING/ALLOCATING, as the
// store holds it: queued at arrivalQueued + i, taken by a worker 5 ms
// later.
func arrivalCandidate(i int) *dynamostore.RequestItem {
	id, qat := arrivalID(i), arrivalQueued+int64(i)
	return &dynamostore.RequestItem{RequestID: id, EventID: costEvent, UserID: fmt.Sprint("user-", i), EventType: asyncevent.FirstCome,
		Status: asyncevent.StatusProcessing, UIPhase: asyncevent.PhaseAllocating, RequestedAt: qat - 3, QueuedAt: qat, StartedAt: qat + 5,
		Attempts: 1, IdempotencyKey: dynamostore.IdempotencyKey(costEvent, fmt.Sprint("user-", i)), WorkerID: "w0", TTL: qat/1000 + 90*24*3600}
}

// arrivalItem renders a request as the store writes it: its attributes,
// keys and GSI1/GSI2 keys, or, with index, only what GSI2 projects (its
// keys, requestId and queuedAt).
func arrivalItem(tb testing.TB, r *dynamostore.RequestItem, index bool) json.RawMessage {
	tb.Helper()
	av, err := attributevalue.MarshalMap(r)
	if err != nil {
		tb.Fatal(err)
	}
	qat := dynamostore.QueuedSortKey(r.QueuedAt, r.RequestID)
	keys := map[string]string{"PK": "REQ#" + r.RequestID, "SK": "META", "GSI2PK": "EVENT#" + r.EventID, "GSI2SK": qat}
	if index {
		av = map[string]types.AttributeValue{"requestId": av["requestId"], "queuedAt": av["queuedAt"]}
	} else {
		keys["entityType"], keys["GSI1PK"], keys["GSI1SK"] = "REQUEST", "USER#"+r.UserID, qat
	}
	for k, v := range keys {
		av[k] = s(v)
	}
	return awsfixture.ItemJSON(av)
}

// arrivalFixture answers an arrival round over the event of costFixture:
// the lease's UpdateItem (ALL_NEW) with the capacity item, fenced at
// arrivalFence, positioned just before the candidates, arrivalSeats left;
// a GSI2 Query from at or before the first candidate with the
// MaxAllocBatch candidates' index entries, a later one (the next batch's)
// with an empty page; a BatchGetItem with the requests asked for. Every
// item is rendered once, here. rec, if not nil, records those calls and
// the TransactWriteItems.
func arrivalFixture(tb testing.TB, rec *awsfixture.Recording) *awsfixture.Server {
	tb.Helper()
	f := costFixture("arrival")
	handle := func(op string, reply awsfixture.Reply) {
		f.Handle(op, func(body []byte) any {
			if rec != nil {
				rec.Add(op, body)
			}
			return reply(body)
		})
	}
	handle("DynamoDB.TransactWriteItems", func([]byte) any { return nil })
	capItem, err := attributevalue.MarshalMap(dynamostore.CapacityItem{EventID: costEvent, CapacityTotal: 1000, CapacityRemaining: arrivalSeats,
		UpdatedAt: arrivalQueued, AllocOwner: "o", AllocLeaseUntil: time.Now().Add(time.Hour).UnixMilli(), AllocFence: arrivalFence,
		AllocQueuedAt: arrivalQueued - 1, AllocRequestID: arrivalID(-1)})
	if err != nil {
		tb.Fatal(err)
	}
	capItem["PK"], capItem["SK"], capItem["entityType"] = s("EVENT#"+costEvent), s("CAPACITY"), s("CAPACITY")
	lease := json.RawMessage(`{"Attributes":` + string(awsfixture.ItemJSON(capItem)) + `}`)
	handle("DynamoDB.UpdateItem", func(body []byte) any {
		if bytes.Contains(body, []byte(`"ReturnValues":"ALL_NEW"`)) {
			return lease
		}
		return nil
	})
	entries := make([]string, asyncevent.MaxAllocBatch)
	items := map[string]json.RawMessage{}
	for i := range entries {
		r := arrivalCandidate(i)
		entries[i] = string(arrivalItem(tb, r, true))
		items["REQ#"+r.RequestID] = arrivalItem(tb, r, false)
	}
	page := json.RawMessage(fmt.Sprintf(`{"Items":[%s],"Count":%d,"ScannedCount":%[2]d}`, strings.Join(entries, ","), len(entries)))
	first := dynamostore.QueuedSortKey(arrivalQueued, arrivalID(0))
	handle("DynamoDB.Query", func(body []byte) any {
		if queryFrom(body) <= first {
			return page
		}
		return nil // the default: an empty page
	})
	handle("DynamoDB.BatchGetItem", awsfixture.BatchGet(func(k awsfixture.Key) json.RawMessage { return items[k["PK"]["S"]] }))
	return f
}

// queryFrom is the lowest QAT# sort key a GSI2 Query's values hold: where
// it starts reading.
func queryFrom(body []byte) string {
	var in struct{ ExpressionAttributeValues map[string]struct{ S string } }
	_ = json.Unmarshal(body, &in)
	from := "~"
	for _, v := range in.ExpressionAttributeValues {
		if strings.HasPrefix(v.S, "QAT#") {
			from = min(from, v.S)
		}
	}
	return from
}

// arrivalRun is one allocator run of costEvent; it returns how many
// requests it decided.
type arrivalRun func(context.Context) (int, error)

// pacerAllocator is the Allocator Run gives its worker, over f.
func pacerAllocator(tb testing.TB, f *awsfixture.Server) arrivalRun {
	tb.Helper()
	roles, _, _ := openWorkerRoles(tb, f)
	return func(ctx context.Context) (int, error) {
		res, err := roles.Allocator.Allocate(ctx, costEvent)
		return res.Decided, err
	}
}

// bareArrival is bareAllocator over f.
func bareArrival(_ testing.TB, f *awsfixture.Server) arrivalRun {
	b := &bareAllocator{bareWorker: bareWorker{db: awsclient.DynamoDB(f.Config()), table: "AsyncEventTable", workerID: "w1"}, owner: "01M8FQN8ZA45KY6KH7TDTAXN55"}
	return func(ctx context.Context) (int, error) { return b.allocate(ctx, costEvent) }
}

// arrivalImpls are the two sides of the arrival pair.
var arrivalImpls = []struct {
	name string
	open func(testing.TB, *awsfixture.Server) arrivalRun
}{{"pacer", pacerAllocator}, {"bare", bareArrival}}

// BenchmarkArrivalCost is one allocator run deciding a full batch
// (decisions/op of them): six AWS calls.
func BenchmarkArrivalCost(b *testing.B) {
	for _, impl := range arrivalImpls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			f := arrivalFixture(b, nil)
			defer f.Close()
			run := impl.open(b, f)
			ctx := context.Background()
			if _, err := run(ctx); err != nil { // warm: Pacer reads the event once
				b.Fatal(err)
			}
			f.Reset()
			b.ReportAllocs()
			runs := 0
			for b.Loop() {
				runs++
				if n, err := run(ctx); err != nil || n != asyncevent.MaxAllocBatch {
					b.Fatalf("decided %d, %v; want %d", n, err, asyncevent.MaxAllocBatch)
				}
			}
			b.ReportMetric(float64(f.Total())/float64(runs), "aws-calls/op")
			b.ReportMetric(asyncevent.MaxAllocBatch, "decisions/op")
		})
	}
}

// TestBareAllocatesAsPacerDoes holds the baseline to Pacer's work: the
// same calls (the lease, the index's Query, the BatchGetItem, the
// transaction, the next batch's Query, the release) with the same keys,
// expressions and items' attributes, and the same requests decided the
// same way. Pacer reads the next batch while it writes this one, so the
// calls are compared in sorted order.
func TestBareAllocatesAsPacerDoes(t *testing.T) {
	type side struct{ shapes, decisions []string }
	sides := map[string]side{}
	for _, impl := range arrivalImpls {
		var rec awsfixture.Recording
		f := arrivalFixture(t, &rec)
		run := impl.open(t, f)
		if _, err := run(context.Background()); err != nil { // warm
			t.Fatal(err)
		}
		rec = awsfixture.Recording{}
		f.Reset()
		n, err := run(context.Background())
		f.Close()
		if err != nil || n != asyncevent.MaxAllocBatch {
			t.Fatalf("%s decided %d, %v; want %d", impl.name, n, err, asyncevent.MaxAllocBatch)
		}
		if f.Total() != arrivalCalls {
			t.Errorf("%s: %d AWS calls, want %d", impl.name, f.Total(), arrivalCalls)
		}
		sides[impl.name] = side{slices.Sorted(slices.Values(rec.Shapes())), decidedIn(t, rec.Calls())}
	}
	pacer, bare := sides["pacer"], sides["bare"]
	if !slices.Equal(pacer.shapes, bare.shapes) {
		t.Errorf("a run's calls differ:\npacer:\n%s\nbare:\n%s", strings.Join(pacer.shapes, "\n"), strings.Join(bare.shapes, "\n"))
	}
	if len(pacer.decisions) != asyncevent.MaxAllocBatch || !slices.Equal(pacer.decisions, bare.decisions) {
		t.Errorf("the decisions differ:\npacer %v\nbare  %v", pacer.decisions, bare.decisions)
	}
}

// decidedIn lists the requests the transactions among calls decide, in
// their order, each with its new status and result code (:7 and :12 of
// its update: the shapes being equal, the same on both sides).
func decidedIn(t *testing.T, calls []awsfixture.Call) []string {
	var out []string
	for _, c := range calls {
		if c.Op != "DynamoDB.TransactWriteItems" {
			continue
		}
		var in struct {
			TransactItems []struct {
				Update *struct {
					Key                       map[string]struct{ S string }
					ExpressionAttributeValues map[string]struct{ S string }
				}
			}
		}
		if err := json.Unmarshal(c.Body, &in); err != nil {
			t.Fatal(err)
		}
		for _, it := range in.TransactItems {
			if u := it.Update; u != nil && strings.HasPrefix(u.Key["PK"].S, "REQ#") {
				out = append(out, u.Key["PK"].S+" "+u.ExpressionAttributeValues[":7"].S+" "+u.ExpressionAttributeValues[":12"].S)
			}
		}
	}
	return out
}
