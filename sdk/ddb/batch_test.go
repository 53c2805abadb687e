package ddb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// flakyClient is a ddb.Client over the real DynamoDB Local client that
// holds back part of each batch and reports it as unprocessed, as DynamoDB
// does under throttling or the 16 MB / 1 MB response limits. What it holds
// back is never sent, so a dropped retry would lose it for real.
type flakyClient struct {
	*dynamodb.Client

	flakyCalls int             // the first flakyCalls batch calls hold back every other request
	stuck      map[string]bool // PK values that are never processed

	mu         sync.Mutex
	calls      int
	retries    int           // calls made after a call that returned unprocessed items
	minGap     time.Duration // shortest wait before a retry
	lastUnproc time.Time     // when the last call returning unprocessed items ended
}

func (c *flakyClient) hold(pk string, i int) bool {
	return c.stuck[pk] || (c.calls <= c.flakyCalls && i%2 == 0)
}

// begin counts a call and measures the wait since the last unprocessed
// answer.
func (c *flakyClient) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if !c.lastUnproc.IsZero() {
		gap := time.Since(c.lastUnproc)
		if c.retries == 0 || gap < c.minGap {
			c.minGap = gap
		}
		c.retries++
		c.lastUnproc = time.Time{}
	}
}

func (c *flakyClient) end(unprocessed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if unprocessed {
		c.lastUnproc = time.Now()
	}
}

func pkOf(it map[string]types.AttributeValue) string {
	return it["PK"].(*types.AttributeValueMemberS).Value
}

func (c *flakyClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	c.begin()
	pass := map[string][]types.WriteRequest{}
	held := map[string][]types.WriteRequest{}
	for table, reqs := range in.RequestItems {
		for i, r := range reqs {
			var pk string
			if r.PutRequest != nil {
				pk = pkOf(r.PutRequest.Item)
			} else {
				pk = pkOf(r.DeleteRequest.Key)
			}
			if c.hold(pk, i) {
				held[table] = append(held[table], r)
			} else {
				pass[table] = append(pass[table], r)
			}
		}
	}
	out := &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{}}
	if len(pass) > 0 {
		real, err := c.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pass, ReturnConsumedCapacity: in.ReturnConsumedCapacity}, opts...)
		if err != nil {
			return nil, err
		}
		out = real
		if out.UnprocessedItems == nil {
			out.UnprocessedItems = map[string][]types.WriteRequest{}
		}
	}
	for table, reqs := range held {
		out.UnprocessedItems[table] = append(out.UnprocessedItems[table], reqs...)
	}
	c.end(len(held) > 0)
	return out, nil
}

func (c *flakyClient) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	c.begin()
	pass := map[string]types.KeysAndAttributes{}
	held := map[string]types.KeysAndAttributes{}
	for table, ka := range in.RequestItems {
		for i, k := range ka.Keys {
			dst := pass
			if c.hold(pkOf(k), i) {
				dst = held
			}
			e := dst[table]
			e.Keys = append(e.Keys, k)
			dst[table] = e
		}
	}
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}, UnprocessedKeys: map[string]types.KeysAndAttributes{}}
	if len(pass) > 0 {
		real, err := c.Client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pass, ReturnConsumedCapacity: in.ReturnConsumedCapacity}, opts...)
		if err != nil {
			return nil, err
		}
		out = real
		if out.UnprocessedKeys == nil {
			out.UnprocessedKeys = map[string]types.KeysAndAttributes{}
		}
	}
	for table, ka := range held {
		e := out.UnprocessedKeys[table]
		e.Keys = append(e.Keys, ka.Keys...)
		out.UnprocessedKeys[table] = e
	}
	c.end(len(held) > 0)
	return out, nil
}

const testBackoff = 20 * time.Millisecond

// flaky returns the test table seen through a flakyClient.
func flaky(env *ddbtest.Env, c *flakyClient, retries int) *ddb.Table {
	c.Client = env.Client
	db := ddb.New(c, ddb.Config{BatchRetries: retries, BatchBackoff: testBackoff, BatchBackoffMax: 4 * testBackoff})
	return db.Table(env.Table.Name(), env.Table.Schema())
}

func requests(n int) ([]*request, []ddb.Key) {
	rs := make([]*request, n)
	ks := make([]ddb.Key, n)
	for i := range rs {
		rs[i] = &request{RequestID: fmt.Sprintf("r%03d", i), UserID: "u", Status: received}
		ks[i] = requestKey(rs[i].RequestID)
	}
	return rs, ks
}

// Unprocessed items are retried, after a backoff, until all are written and
// read back.
func TestBatchRetriesUnprocessedWithBackoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	rs, keys := requests(60) // 3 write chunks, 1 read chunk

	fw := &flakyClient{flakyCalls: 4}
	reqs, _ := entities(flaky(env, fw, 8))
	if err := reqs.BatchPut(ctx, rs); err != nil {
		t.Fatal(err)
	}
	// 3 chunks, and the first 4 calls each left half unprocessed.
	if fw.calls <= 3 || fw.retries < 1 {
		t.Fatalf("%d calls, %d retries: nothing was retried", fw.calls, fw.retries)
	}
	if fw.minGap < testBackoff/2 {
		t.Fatalf("a retry came %v after an unprocessed answer; backoff is at least %v", fw.minGap, testBackoff/2)
	}

	// Every item is really there (read without the flaky client).
	direct, _ := entities(env.Table)
	got, err := direct.BatchGet(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r == nil || r.RequestID != rs[i].RequestID {
			t.Fatalf("item %d after BatchPut: %+v", i, r)
		}
	}

	fr := &flakyClient{flakyCalls: 3}
	reqs, _ = entities(flaky(env, fr, 8))
	keys = append(keys, requestKey("missing"), keys[5]) // a missing key, a duplicate
	got, err = reqs.BatchGet(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if fr.retries < 3 || fr.minGap < testBackoff/2 {
		t.Fatalf("BatchGet: %d retries, shortest wait %v", fr.retries, fr.minGap)
	}
	for i, r := range got[:60] {
		if r == nil || r.RequestID != rs[i].RequestID {
			t.Fatalf("BatchGet item %d = %+v, want %s", i, r, rs[i].RequestID)
		}
	}
	if got[60] != nil || got[61] == nil || got[61].RequestID != "r005" {
		t.Fatalf("missing key = %+v, duplicate = %+v", got[60], got[61])
	}
}

// When the budget is exhausted, the error lists exactly what was not
// written: every item is either in the table or in the error, never both,
// never neither.
func TestBatchWriteBudgetExhausted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	rs, keys := requests(30) // chunks of 25 and 5
	stuck := map[string]bool{}
	for _, i := range []int{2, 11, 24} {
		stuck[keys[i].PK] = true
	}
	fc := &flakyClient{stuck: stuck}
	reqs, _ := entities(flaky(env, fc, 2))
	err := reqs.BatchPut(ctx, rs)
	var be *ddb.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("want *BatchError, got %v", err)
	}
	if fc.calls != 3 {
		t.Fatalf("%d calls for the first chunk, want 1 + 2 retries", fc.calls)
	}
	var unwritten []string
	for _, it := range be.Puts {
		unwritten = append(unwritten, pkOf(it))
	}
	slices.Sort(unwritten)
	var want []string
	for i, k := range keys {
		if stuck[k.PK] || i >= 25 { // the stuck ones, and the chunk never sent
			want = append(want, k.PK)
		}
	}
	if !slices.Equal(unwritten, want) || be.Unprocessed != len(want) || be.Op != "BatchWriteItem" || len(be.Keys) != 0 {
		t.Fatalf("BatchError lists %q (Unprocessed %d), want %q", unwritten, be.Unprocessed, want)
	}
	direct, _ := entities(env.Table)
	got, err := direct.BatchGet(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		inErr := slices.Contains(unwritten, keys[i].PK)
		if (r != nil) == inErr {
			t.Fatalf("item %s: written=%v, listed in error=%v", keys[i].PK, r != nil, inErr)
		}
	}
}

func TestBatchGetBudgetExhausted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	rs, keys := requests(120) // chunks of 100 and 20
	direct, _ := entities(env.Table)
	if err := direct.BatchPut(ctx, rs); err != nil {
		t.Fatal(err)
	}
	stuck := map[string]bool{keys[0].PK: true, keys[99].PK: true}
	fc := &flakyClient{stuck: stuck}
	reqs, _ := entities(flaky(env, fc, 3))
	partial, err := reqs.BatchGet(ctx, keys)
	if len(partial) != len(keys) || partial[0] != nil || partial[1] == nil || partial[1].RequestID != rs[1].RequestID || partial[100] != nil {
		t.Fatalf("partial results: %d entries; [0]=%v [1]=%v [100]=%v", len(partial), partial[0], partial[1], partial[100])
	}
	var be *ddb.BatchError
	if !errors.As(err, &be) {
		t.Fatalf("want *BatchError, got %v", err)
	}
	if fc.calls != 4 {
		t.Fatalf("%d calls, want 1 + 3 retries", fc.calls)
	}
	want := append([]ddb.Key{keys[0], keys[99]}, keys[100:]...)
	got := slices.Clone(be.Keys)
	slices.SortFunc(got, func(a, b ddb.Key) int { return strings.Compare(a.PK, b.PK) })
	if !slices.Equal(got, want) || be.Unprocessed != len(want) || be.Op != "BatchGetItem" {
		t.Fatalf("BatchError keys %v (Unprocessed %d), want %v", got, be.Unprocessed, want)
	}
}

// A batch with the same key twice is refused before any call.
func TestBatchWriteRejectsDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	err := reqs.BatchPut(ctx, []*request{{RequestID: "a"}, {RequestID: "a"}})
	if !errors.Is(err, ddb.ErrInvalid) || env.Calls.Total() != 0 {
		t.Fatalf("want ErrInvalid and no call, got %v after %d calls", err, env.Calls.Total())
	}
}
