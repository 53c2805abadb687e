package asynceventtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// ConflictDynamo wraps a DynamoDB client (DynamoDB Local) and enforces the
// rule of real DynamoDB that DynamoDB Local does not (it serializes
// instead): an item that a TransactWriteItems in flight holds cannot be
// written by another one, nor by a single PutItem, UpdateItem or
// DeleteItem ("Transaction conflict handling in DynamoDB"). The loser is
// refused exactly as the real API refuses it, so the SDK's conflict
// handling sees what it would see on AWS:
//
//   - a transaction: *types.TransactionCanceledException whose
//     CancellationReasons hold Code "TransactionConflict" for each held item
//     and "None" for the others; nothing is applied;
//   - a single write: *types.TransactionConflictException.
//
// Items are told apart by table and the key attributes KeyNames.
type ConflictDynamo struct {
	ddb.Client
	// KeyNames are the key attributes (default PK and SK).
	KeyNames []string
	// Hold keeps a transaction's items held this long after DynamoDB Local
	// answered, standing in for the network and replication time a real
	// transaction spends in flight (default 0).
	Hold time.Duration

	mu     sync.Mutex
	held   map[string]int
	writes map[string]int64

	// TxConflicts counts transactions refused; WriteConflicts single
	// writes refused; Transactions the transactions let through.
	TxConflicts, WriteConflicts, Transactions atomic.Int64
}

// NewConflictDynamo wraps c.
func NewConflictDynamo(c ddb.Client) *ConflictDynamo {
	return &ConflictDynamo{Client: c, KeyNames: []string{"PK", "SK"}, held: map[string]int{}}
}

func (c *ConflictDynamo) id(table *string, key map[string]types.AttributeValue) string {
	var b strings.Builder
	b.WriteString(aws.ToString(table))
	for _, n := range c.KeyNames {
		b.WriteByte(0)
		switch v := key[n].(type) {
		case *types.AttributeValueMemberS:
			b.WriteString("S" + v.Value)
		case *types.AttributeValueMemberN:
			b.WriteString("N" + v.Value)
		case *types.AttributeValueMemberB:
			b.WriteString("B" + string(v.Value))
		}
	}
	return b.String()
}

func (c *ConflictDynamo) txItemID(it types.TransactWriteItem) string {
	switch {
	case it.Put != nil:
		return c.id(it.Put.TableName, it.Put.Item)
	case it.Update != nil:
		return c.id(it.Update.TableName, it.Update.Key)
	case it.Delete != nil:
		return c.id(it.Delete.TableName, it.Delete.Key)
	case it.ConditionCheck != nil:
		return c.id(it.ConditionCheck.TableName, it.ConditionCheck.Key)
	}
	return ""
}

// TransactWriteItems holds the transaction's items while it is in flight,
// or refuses it with TransactionConflict if another holds one of them.
func (c *ConflictDynamo) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	ids := make([]string, len(in.TransactItems))
	for i, it := range in.TransactItems {
		ids[i] = c.txItemID(it)
	}
	c.mu.Lock()
	reasons := make([]types.CancellationReason, len(ids))
	codes := make([]string, len(ids))
	conflict := false
	for i, id := range ids {
		codes[i] = "None"
		reasons[i] = types.CancellationReason{Code: aws.String("None")}
		if c.held[id] > 0 {
			conflict = true
			codes[i] = "TransactionConflict"
			reasons[i] = types.CancellationReason{Code: aws.String("TransactionConflict"),
				Message: aws.String("Transaction is ongoing for the item")}
		}
	}
	if conflict {
		c.mu.Unlock()
		c.TxConflicts.Add(1)
		return nil, &types.TransactionCanceledException{
			Message:             aws.String(fmt.Sprintf("Transaction cancelled, please refer cancellation reasons for specific reasons [%s]", strings.Join(codes, ", "))),
			CancellationReasons: reasons,
		}
	}
	if c.held == nil {
		c.held = map[string]int{}
	}
	for _, id := range ids {
		c.held[id]++
	}
	c.count(ids...)
	c.mu.Unlock()
	c.Transactions.Add(1)
	defer func() {
		c.mu.Lock()
		for _, id := range ids {
			if c.held[id]--; c.held[id] == 0 {
				delete(c.held, id)
			}
		}
		c.mu.Unlock()
	}()
	out, err := c.Client.TransactWriteItems(ctx, in, opts...)
	if c.Hold > 0 {
		t := time.NewTimer(c.Hold)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	return out, err
}

func (c *ConflictDynamo) refuse(table *string, key map[string]types.AttributeValue) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.id(table, key)
	if c.held[id] > 0 {
		c.WriteConflicts.Add(1)
		return &types.TransactionConflictException{Message: aws.String("Transaction is ongoing for the item")}
	}
	c.count(id)
	return nil
}

// count counts writes let through (c.mu held).
func (c *ConflictDynamo) count(ids ...string) {
	if c.writes == nil {
		c.writes = map[string]int64{}
	}
	for _, id := range ids {
		c.writes[id]++
	}
}

// Writes is how many writes (transaction items or single writes, let
// through) touched the item of table with the string key values keys (in
// KeyNames order).
func (c *ConflictDynamo) Writes(table string, keys ...string) int64 {
	key := map[string]types.AttributeValue{}
	for i, k := range keys {
		key[c.KeyNames[i]] = &types.AttributeValueMemberS{Value: k}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes[c.id(&table, key)]
}

// PutItem is refused with TransactionConflictException while a
// transaction holds the item.
func (c *ConflictDynamo) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := c.refuse(in.TableName, in.Item); err != nil {
		return nil, err
	}
	return c.Client.PutItem(ctx, in, opts...)
}

// UpdateItem is refused with TransactionConflictException while a
// transaction holds the item.
func (c *ConflictDynamo) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if err := c.refuse(in.TableName, in.Key); err != nil {
		return nil, err
	}
	return c.Client.UpdateItem(ctx, in, opts...)
}

// DeleteItem is refused with TransactionConflictException while a
// transaction holds the item.
func (c *ConflictDynamo) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if err := c.refuse(in.TableName, in.Key); err != nil {
		return nil, err
	}
	return c.Client.DeleteItem(ctx, in, opts...)
}
