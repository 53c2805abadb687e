package ddb_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// conflictClient cancels the first n transactions with TransactionConflict
// (as DynamoDB does when two transactions touch one item at once), then
// passes them to the real client.
type conflictClient struct {
	ddb.Client
	n     int64
	calls atomic.Int64
}

func (c *conflictClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if c.calls.Add(1) <= c.n {
		reasons := make([]types.CancellationReason, len(in.TransactItems))
		for i := range reasons {
			reasons[i] = types.CancellationReason{Code: aws.String("None")}
		}
		reasons[len(reasons)-1].Code = aws.String("TransactionConflict")
		return nil, &types.TransactionCanceledException{Message: aws.String("conflict"), CancellationReasons: reasons}
	}
	return c.Client.TransactWriteItems(ctx, in, opts...)
}

func TestTransactRetriesConflictsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	for _, tc := range []struct {
		name      string
		conflicts int64
		retries   int
		wantCalls int64
		wantErr   bool
	}{
		{"recovers", 3, 5, 4, false},
		{"budget exhausted", 10, 2, 3, true},
		{"disabled", 1, -1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &conflictClient{Client: env.Client, n: tc.conflicts}
			db := ddb.New(c, ddb.Config{TxConflictRetries: tc.retries, BatchBackoff: time.Millisecond, BatchBackoffMax: 5 * time.Millisecond})
			reqs, _ := entities(db.Table(env.Table.Name(), &schema))
			err := db.Transact(ctx, reqs.Create(&request{RequestID: "c-" + tc.name, Status: received}))
			if got := c.calls.Load(); got != tc.wantCalls {
				t.Fatalf("%d calls, want %d", got, tc.wantCalls)
			}
			var te *ddb.TxError
			if tc.wantErr != (err != nil) || (err != nil && (!errors.As(err, &te) || te.Failed().Code != "TransactionConflict")) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// A failed condition is an answer, not a conflict: no retry.
	c := &conflictClient{Client: env.Client}
	db := ddb.New(c, ddb.Config{})
	reqs, _ := entities(db.Table(env.Table.Name(), &schema))
	if err := db.Transact(ctx, reqs.Create(&request{RequestID: "c-recovers", Status: received})); !errors.Is(err, ddb.ErrConditionFailed) {
		t.Fatalf("want ErrConditionFailed, got %v", err)
	}
	if c.calls.Load() != 1 {
		t.Fatalf("condition failure retried: %d calls", c.calls.Load())
	}
}

// putConflictClient refuses the first n PutItems with
// TransactionConflictException (the item is in a transaction in flight),
// then passes them to the real client.
type putConflictClient struct {
	ddb.Client
	n     int64
	calls atomic.Int64
}

func (c *putConflictClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if c.calls.Add(1) <= c.n {
		return nil, &types.TransactionConflictException{Message: aws.String("conflict")}
	}
	return c.Client.PutItem(ctx, in, opts...)
}

// A single write refused with TransactionConflict is retried like a
// conflicted transaction, within the same budget; other errors are not.
func TestSingleWriteRetriesConflicts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	for _, tc := range []struct {
		name      string
		conflicts int64
		retries   int
		wantCalls int64
		wantErr   bool
	}{
		{"recovers", 3, 5, 4, false},
		{"budget exhausted", 10, 2, 3, true},
		{"disabled", 1, -1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &putConflictClient{Client: env.Client, n: tc.conflicts}
			db := ddb.New(c, ddb.Config{TxConflictRetries: tc.retries, BatchBackoff: time.Millisecond, BatchBackoffMax: 5 * time.Millisecond})
			reqs, _ := entities(db.Table(env.Table.Name(), &schema))
			err := reqs.Create(&request{RequestID: "p-" + tc.name, Status: received}).Run(ctx)
			if got := c.calls.Load(); got != tc.wantCalls {
				t.Fatalf("%d calls, want %d", got, tc.wantCalls)
			}
			var tce *types.TransactionConflictException
			if tc.wantErr != (err != nil) || (err != nil && !errors.As(err, &tce)) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// A failed condition is an answer: no retry.
	c := &putConflictClient{Client: env.Client}
	db := ddb.New(c, ddb.Config{})
	reqs, _ := entities(db.Table(env.Table.Name(), &schema))
	if err := reqs.Create(&request{RequestID: "p-recovers", Status: received}).Run(ctx); !errors.Is(err, ddb.ErrConditionFailed) || c.calls.Load() != 1 {
		t.Fatalf("condition failure: %v after %d calls, want ErrConditionFailed after 1", err, c.calls.Load())
	}
}
