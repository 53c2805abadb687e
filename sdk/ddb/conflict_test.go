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

// A write refused with TransactionConflict (a transaction whose item is
// in another transaction in flight, or a single write on such an item) is
// retried within TxConflictRetries; a failed condition is an answer and is
// not retried.
func TestWritesRetryConflictsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	for _, kind := range []struct {
		name string
		// client refuses the first n writes of this kind with a conflict
		// and counts them.
		client func(n int64) (ddb.Client, *atomic.Int64)
		write  func(db *ddb.DB, reqs *ddb.Entity[request], id string) error
		// conflict reports whether err is this kind's conflict error.
		conflict func(err error) bool
	}{
		{
			name: "transaction",
			client: func(n int64) (ddb.Client, *atomic.Int64) {
				c := &conflictClient{Client: env.Client, n: n}
				return c, &c.calls
			},
			write: func(db *ddb.DB, reqs *ddb.Entity[request], id string) error {
				return db.Transact(ctx, reqs.Create(&request{RequestID: id, Status: received}))
			},
			conflict: func(err error) bool {
				var te *ddb.TxError
				return errors.As(err, &te) && te.Failed().Code == "TransactionConflict"
			},
		},
		{
			name: "single write",
			client: func(n int64) (ddb.Client, *atomic.Int64) {
				c := &putConflictClient{Client: env.Client, n: n}
				return c, &c.calls
			},
			write: func(_ *ddb.DB, reqs *ddb.Entity[request], id string) error {
				return reqs.Create(&request{RequestID: id, Status: received}).Run(ctx)
			},
			conflict: func(err error) bool {
				var tce *types.TransactionConflictException
				return errors.As(err, &tce)
			},
		},
	} {
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
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				c, calls := kind.client(tc.conflicts)
				db := ddb.New(c, ddb.Config{TxConflictRetries: tc.retries, BatchBackoff: time.Millisecond, BatchBackoffMax: 5 * time.Millisecond})
				reqs, _ := entities(db.Table(env.Table.Name(), &schema))
				err := kind.write(db, reqs, kind.name+"-"+tc.name)
				if got := calls.Load(); got != tc.wantCalls {
					t.Fatalf("%d calls, want %d", got, tc.wantCalls)
				}
				if tc.wantErr != (err != nil) || (err != nil && !kind.conflict(err)) {
					t.Fatalf("err = %v", err)
				}
			})
		}
		// A failed condition (the item exists: "recovers" wrote it) is
		// an answer, not a conflict: no retry.
		c, calls := kind.client(0)
		db := ddb.New(c, ddb.Config{})
		reqs, _ := entities(db.Table(env.Table.Name(), &schema))
		if err := kind.write(db, reqs, kind.name+"-recovers"); !errors.Is(err, ddb.ErrConditionFailed) || calls.Load() != 1 {
			t.Fatalf("%s: condition failure: %v after %d calls, want ErrConditionFailed after 1", kind.name, err, calls.Load())
		}
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
