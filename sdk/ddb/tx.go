package ddb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxTxOps is the most operations one transaction may hold.
const MaxTxOps = 100

// Transact runs ops as one TransactWriteItems: all succeed or none does.
// A transaction cancelled only by TransactionConflict (another transaction
// on the same items at the same moment) or ThrottlingError (a partition
// out of throughput) applied nothing and is retried with backoff, up to
// Config.TxConflictRetries times.
// If DynamoDB cancels it, the error is a *TxError whose Reasons map each
// cancellation to its operation (by index and Label) and, for failed
// conditions, carry the item as it is now. Requests the SDK can reject
// (no ops, more than 100, two ops on one key) fail with ErrInvalid before
// any call.
func (db *DB) Transact(ctx context.Context, ops ...*Op) error {
	return db.TransactToken(ctx, "", ops...)
}

// TransactToken is Transact with a client request token, which makes the
// transaction idempotent for 10 minutes: a retry with the same token and
// ops does not apply twice.
//
// DynamoDB scopes a token to the account and region, not to a table: for
// those 10 minutes a token must be unique across every table and tenant
// the account serves (derive it from ids that are, e.g. a ULID request
// id, never from a per-table counter). The same token with other
// operations fails with IdempotentParameterMismatchException, and
// DynamoDB Local shares tokens across its tables in the same way.
func (db *DB) TransactToken(ctx context.Context, token string, ops ...*Op) error {
	if len(ops) == 0 || len(ops) > MaxTxOps {
		return fmt.Errorf("%w: a transaction takes 1 to %d operations, got %d", ErrInvalid, MaxTxOps, len(ops))
	}
	items := make([]types.TransactWriteItem, len(ops))
	seen := make(map[[3]string]int, len(ops))
	for i, o := range ops {
		if o == nil {
			return fmt.Errorf("%w: transaction operation %d is nil", ErrInvalid, i)
		}
		id := [3]string{o.table.name, o.key.PK, o.key.SK}
		if j, dup := seen[id]; dup {
			return fmt.Errorf("%w: transaction operations %d (%s) and %d (%s) touch the same item %s / %s", ErrInvalid, j, ops[j].label, i, o.label, o.key.PK, o.key.SK)
		}
		seen[id] = i
		ti, err := o.txItem()
		if err != nil {
			return err
		}
		items[i] = ti
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items, ReturnConsumedCapacity: db.consumed()}
	if token != "" {
		in.ClientRequestToken = aws.String(token)
	}
	// A transaction cancelled only because another touched the same items
	// at the same moment applied nothing, so it is tried again.
	return db.retry(ctx, func(err error) bool {
		var te *TxError
		return errors.As(err, &te) && te.conflictOnly()
	}, func() error { return db.transactOnce(ctx, in, ops) })
}

// transactOnce makes one TransactWriteItems call.
func (db *DB) transactOnce(ctx context.Context, in *dynamodb.TransactWriteItemsInput, ops []*Op) error {
	start := time.Now()
	out, err := db.client.TransactWriteItems(ctx, in)
	var cc []types.ConsumedCapacity
	if out != nil {
		cc = out.ConsumedCapacity
	}
	db.observe(ctx, "TransactWriteItems", ops[0].table.name, "", start, cc, err)
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && len(tce.CancellationReasons) == len(ops) {
		te := &TxError{Err: err, Reasons: make([]TxReason, len(ops))}
		for i, r := range tce.CancellationReasons {
			te.Reasons[i] = TxReason{Index: i, Op: ops[i].label, Key: ops[i].key, Code: aws.ToString(r.Code), Message: aws.ToString(r.Message), Item: r.Item}
		}
		return te
	}
	return fmt.Errorf("ddb: TransactWriteItems: %w", err)
}

// txItem converts the operation for TransactWriteItems.
func (o *Op) txItem() (types.TransactWriteItem, error) {
	e, err := o.expr()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	var cond, update *string
	var names map[string]string
	var values map[string]types.AttributeValue
	if e != nil {
		cond, update, names, values = e.cond, e.update, e.names, e.values
	}
	t := o.table
	name := aws.String(t.name)
	old := types.ReturnValuesOnConditionCheckFailureAllOld
	switch o.kind {
	case opPut:
		return types.TransactWriteItem{Put: &types.Put{TableName: name, Item: o.item, ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: old}}, nil
	case opUpdate:
		return types.TransactWriteItem{Update: &types.Update{TableName: name, Key: t.key(o.key), UpdateExpression: update,
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: old}}, nil
	case opDelete:
		return types.TransactWriteItem{Delete: &types.Delete{TableName: name, Key: t.key(o.key), ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: old}}, nil
	default:
		if cond == nil {
			return types.TransactWriteItem{}, fmt.Errorf("%w: %s: a condition check needs a condition (If)", ErrInvalid, o.label)
		}
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: name, Key: t.key(o.key), ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values, ReturnValuesOnConditionCheckFailure: old}}, nil
	}
}
