package ddb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

type recorder struct {
	mu    sync.Mutex
	calls []ddb.Call
}

func (r *recorder) ObserveCall(_ context.Context, c ddb.Call) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// The observer sees one Call per request, with its latency and the
// consumed capacity DynamoDB reported.
func TestObserverSeesLatencyAndCapacity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{}
	env := ddbtest.New(t, &schema, ddb.Config{Observer: rec})
	reqs, caps := entities(env.Table)
	r := &request{RequestID: "r1", UserID: "u1", Status: received, GSI1PK: userPK.Build("u1"), GSI1SK: qatSK.Build(ddb.Millis(1), "r1")}
	steps := []struct {
		op  string
		run func() error
	}{
		{"PutItem", func() error { return reqs.Put(r).Run(ctx) }},
		{"GetItem", func() error { _, err := reqs.Get(ctx, requestKey("r1")); return err }},
		{"UpdateItem", func() error { return reqs.Update(requestKey("r1")).Set("uiPhase", "X").Run(ctx) }},
		{"Query", func() error { _, err := reqs.Query("GSI1", userPK.Build("u1")).Limit(5).Page(ctx); return err }},
		{"BatchGetItem", func() error { _, err := reqs.BatchGet(ctx, []ddb.Key{requestKey("r1")}); return err }},
		{"BatchWriteItem", func() error { return caps.BatchPut(ctx, []*capacity{{EventID: "e1", Remaining: 1}}) }},
		{"TransactWriteItems", func() error {
			return env.DB.Transact(ctx, caps.Update(capacityKey("e1")).Add("capacityRemaining", 1).Op())
		}},
		{"DeleteItem", func() error { return reqs.Delete(requestKey("r1")).Run(ctx) }},
	}
	for i, s := range steps {
		if err := s.run(); err != nil {
			t.Fatalf("%s: %v", s.op, err)
		}
		if len(rec.calls) != i+1 {
			t.Fatalf("after %s: observed %d calls, want %d", s.op, len(rec.calls), i+1)
		}
		c := rec.calls[i]
		if c.Operation != s.op || c.Table != env.Table.Name() || c.Err != nil {
			t.Fatalf("observed %+v, want %s on %s", c, s.op, env.Table.Name())
		}
		if c.Duration <= 0 {
			t.Errorf("%s: duration %v", s.op, c.Duration)
		}
		if c.Capacity <= 0 {
			t.Errorf("%s: consumed capacity %v, want > 0", s.op, c.Capacity)
		}
	}
	if rec.calls[3].Index != "GSI1" {
		t.Errorf("query observed on index %q", rec.calls[3].Index)
	}

	// A failed call is observed too, with its error.
	if err := reqs.Create(&request{RequestID: "r2"}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	err := reqs.Create(&request{RequestID: "r2"}).Run(ctx)
	last := rec.calls[len(rec.calls)-1]
	if !errors.Is(err, ddb.ErrConditionFailed) || last.Err == nil || last.Operation != "PutItem" {
		t.Fatalf("failed create: %v; observed %+v", err, last)
	}
}

// capacityAsked records whether each call asked for consumed capacity.
type capacityAsked struct {
	ddb.Client
	mu    sync.Mutex
	asked []types.ReturnConsumedCapacity
}

func (c *capacityAsked) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.mu.Lock()
	c.asked = append(c.asked, in.ReturnConsumedCapacity)
	c.mu.Unlock()
	return c.Client.PutItem(ctx, in, opts...)
}

// With SkipConsumedCapacity the observer still sees every call, and
// DynamoDB is not asked for its capacity.
func TestObserverWithoutCapacity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rec := &recorder{}
	env := ddbtest.New(t, &schema, ddb.Config{})
	client := &capacityAsked{Client: env.DB.Client()}
	for i, skip := range []bool{false, true} {
		db := ddb.New(client, ddb.Config{Observer: rec, SkipConsumedCapacity: skip})
		reqs, _ := entities(db.Table(env.Table.Name(), &schema))
		if err := reqs.Put(&request{RequestID: fmt.Sprint("r", i), UserID: "u1", Status: received}).Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want := []types.ReturnConsumedCapacity{types.ReturnConsumedCapacityTotal, types.ReturnConsumedCapacityNone}
	if !slices.Equal(client.asked, want) || len(rec.calls) != 2 {
		t.Fatalf("asked %v, observed %d calls; want %v and 2", client.asked, len(rec.calls), want)
	}
	if rec.calls[0].Capacity <= 0 || rec.calls[1].Capacity != 0 || rec.calls[1].Duration <= 0 {
		t.Fatalf("observed %+v, want capacity only without SkipConsumedCapacity, a duration on both", rec.calls)
	}
}
