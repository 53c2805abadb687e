package dynamostore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/capacity"
)

var ctx = context.Background()

// typicalWorkerID is a worker id as asynceventworker.DefaultWorkerID makes it on
// ECS (Fargate's hostname, then the pid): what the capacity model prices.
const typicalWorkerID = "ip-10-0-123-234.ap-northeast-2.compute.internal-1"

// measure runs every operation of the capacity model once on a fresh
// table (ProjectAllSchema's GSI2 projecting ALL, or the narrow one), through a capacity.Meter on
// DynamoDB Local, and returns what each cost.
func measure(t *testing.T, seed bool) map[string]capacity.Usage {
	t.Helper()
	var m *capacity.Meter
	env := asynceventtest.New(t, asynceventtest.Options{
		ProjectAllIndex: seed,
		// A worker's transitions record its id (a worker's default on ECS:
		// its hostname and pid). The event cache outlives the test, as a
		// running service's is warm: with the default 2 s, 49 joins on a
		// loaded machine outlasted it and the first candidate read the
		// event again.
		WorkerID:      typicalWorkerID,
		EventCacheTTL: time.Hour,
		Dynamo: func(c ddb.Client, table string, s *ddb.Schema) ddb.Client {
			m = capacity.NewMeter(c, map[string]*ddb.Schema{table: s})
			return m
		},
	})
	out := map[string]capacity.Usage{}
	take := func(op string, per int) { out[op] = capacity.Measure(op, per, m.Take()) }
	closes := time.Now().Add(time.Hour).UnixMilli()
	for _, o := range []asyncevent.Ordering{asyncevent.OrderDelivery, asyncevent.OrderArrival} {
		if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "ev-" + string(o), EventType: asyncevent.FirstCome,
			Capacity: 100, ClosesAt: closes, Ordering: o}); err != nil {
			t.Fatal(err)
		}
	}
	take("create event", 1)
	deliver := func(eventID, user, requestID string) asyncevent.Outcome {
		body := asyncevent.Message{V: 1, RequestID: requestID, EventID: eventID, UserID: user, EventType: asyncevent.FirstCome}.Encode()
		return env.Worker.Process(ctx, asyncevent.Delivery{Body: body, ReceiveCount: 1, SentAt: time.Now()})
	}
	join := func(eventID, user string) string {
		p, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: eventID, UserID: user})
		if err != nil {
			t.Fatal(err)
		}
		return p.RequestID
	}
	// Warm the service's event cache, as a running service has it.
	deliver("ev-delivery", "user-0000", join("ev-delivery", "user-0000"))
	m.Take()

	id := join("ev-delivery", "user-0001")
	take("ingest", 1)
	if _, err := env.Query.GetRequest(ctx, asyncevent.Caller{UserID: "user-0001"}, id); err != nil {
		t.Fatal(err)
	}
	take("status poll", 1)
	if o := deliver("ev-delivery", "user-0001", id); !o.Ack || o.Status != asyncevent.StatusSucceeded {
		t.Fatalf("delivery decision: %+v", o)
	}
	take("decide (delivery)", 1)

	// Arrival: 49 candidates, then one allocator run decides them.
	ids := make([]string, asyncevent.MaxAllocBatch)
	for i := range ids {
		ids[i] = join("ev-arrival", fmt.Sprintf("user-%04d", i))
	}
	m.Take()
	for i, id := range ids {
		if o := deliver("ev-arrival", fmt.Sprintf("user-%04d", i), id); o.Result != "waiting" || o.Status != asyncevent.StatusProcessing {
			t.Fatalf("candidate: %+v, want waiting (its message continued)", o)
		}
		if i == 0 {
			take("candidate (arrival)", 1)
		}
	}
	m.Take()
	time.Sleep(5 * time.Millisecond)
	// An allocator allowing no lateness: nothing else writes here.
	alloc := asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: env.Store, AllocLease: time.Minute, WorkerID: typicalWorkerID,
		Lateness: asyncevent.Lateness{WriteTimeout: time.Millisecond, ClockSkew: -1, IndexLag: -1}})
	res, err := alloc.Allocate(ctx, "ev-arrival")
	if err != nil || res.Decided != len(ids) || res.Batches != 1 {
		t.Fatalf("allocate: %+v, %v", res, err)
	}
	take("allocate (arrival)", len(ids))
	for _, id := range ids {
		if r := env.Request(t, id); r.Status != asyncevent.StatusSucceeded {
			t.Fatalf("%s is %s", id, r.Status)
		}
	}
	m.Take()
	// The redelivery of a decided candidate's message acks it.
	if o := deliver("ev-arrival", "user-0000", ids[0]); !o.Ack {
		t.Fatalf("decided candidate not acked: %+v", o)
	}
	m.Take()

	page, err := env.Admin.EventRequests(ctx, "ev-arrival", asyncevent.StatusSucceeded, 20, "")
	if err != nil || len(page.Requests) != 20 {
		t.Fatalf("admin list: %d, %v", len(page.Requests), err)
	}
	take("admin list (20, status filter)", 1)
	if _, err := env.Query.MyRequests(ctx, "user-0001", 20, ""); err != nil {
		t.Fatal(err)
	}
	take("user list", 1)
	return out
}

// TestCapacityModel measures every operation of AsyncEventTable's
// capacity model on real items and fails if a figure drifted from the
// model (dynamostore.CapacityModel, docs/capacity.md). Item sizes may
// differ by a few bytes from run to run (numbers such as timestamps
// are stored without trailing zeroes): MaxItem is compared within
// capacity.SizeSlack bytes.
func TestCapacityModel(t *testing.T) {
	for _, v := range []struct {
		name string
		seed bool
	}{{"seed", true}, {"narrow", false}} {
		t.Run(v.name, func(t *testing.T) {
			for _, d := range capacity.Compare(dynamostore.CapacityModel(v.seed), measure(t, v.seed)) {
				t.Error(d)
			}
		})
	}
}

// Flows of one participation, and the per-event partitions they write.
var (
	arrivalFlow  = []string{"ingest", "candidate (arrival)", "allocate (arrival)"}
	deliveryFlow = []string{"ingest", "decide (delivery)"}
	eventKeys    = []string{"W|GSI2|EVENT#", "W|table|EVENT#", "R|GSI2|EVENT#"}
)

// capacityDoc renders the tables docs/capacity.md must hold.
func capacityDoc() []string {
	var out []string
	for _, seed := range []bool{true, false} {
		m := dynamostore.CapacityModel(seed)
		out = append(out, capacity.Markdown(m), capacity.CeilingMarkdown(m, []capacity.CeilingRow{
			{Flow: "participation, arrival", Ops: arrivalFlow, Keys: eventKeys},
			{Flow: "participation, delivery", Ops: deliveryFlow, Keys: eventKeys},
		}))
	}
	return out
}

// TestCapacityDoc fails when docs/capacity.md does not show the model's
// tables as the model has them (and prints them).
func TestCapacityDoc(t *testing.T) {
	checkDoc(t, "../../../docs/capacity.md", capacityDoc())
}

func checkDoc(t *testing.T, path string, blocks []string) {
	t.Helper()
	missing, err := capacity.MissingFromDoc(path, blocks...)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range missing {
		t.Errorf("%s lacks this table of the model; paste it:\n\n%s", path, b)
	}
}
