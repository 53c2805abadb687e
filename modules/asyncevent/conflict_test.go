package asyncevent_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// The conflict-enforcing client refuses what real DynamoDB refuses while a
// transaction holds an item: another transaction (TransactionCanceled with
// TransactionConflict for the held item, None for the others) and a single
// write (TransactionConflictException); other items pass.
func TestConflictDynamoEnforcesTheRule(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{EnforceConflicts: true})
	firstCome(t, env, "hot", 10)
	firstCome(t, env, "cold", 10)
	c := env.Conflict
	c.Hold = 2 * time.Second
	table := aws.String(env.DDB.Table.Name())
	key := func(ev string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "EVENT#" + ev}, "SK": &types.AttributeValueMemberS{Value: "CAPACITY"}}
	}
	take := func(ev string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{TableName: table, Key: key(ev),
			UpdateExpression:          aws.String("ADD capacityRemaining :m"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberN{Value: "-1"}}}}
	}
	before := c.Transactions.Load() // the events' creation
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{take("hot")}}); err != nil {
			t.Errorf("first transaction: %v", err)
		}
	})
	asynceventtest.Eventually(t, 5*time.Second, "the first transaction in flight", func() (bool, error) {
		return c.Transactions.Load() == before+1, nil
	})
	_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{take("cold"), take("hot")}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 ||
		aws.ToString(tce.CancellationReasons[0].Code) != "None" || aws.ToString(tce.CancellationReasons[1].Code) != "TransactionConflict" {
		t.Fatalf("second transaction: %v, want TransactionCanceled [None, TransactionConflict]", err)
	}
	_, err = c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("hot"),
		UpdateExpression: aws.String("SET updatedAt = :t"), ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberN{Value: "1"}}})
	var tc *types.TransactionConflictException
	if !errors.As(err, &tc) {
		t.Fatalf("single write: %v, want TransactionConflictException", err)
	}
	if _, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{take("cold")}}); err != nil {
		t.Fatalf("transaction on another item: %v", err)
	}
	wg.Wait()
	if cp, err := env.Store.GetCapacity(ctx, "hot"); err != nil || cp.CapacityRemaining != 9 {
		t.Fatalf("hot capacity %+v, %v: want 9 (only the first transaction applied)", cp, err)
	}
	if got := c.TxConflicts.Load() + c.WriteConflicts.Load(); got != 2 {
		t.Fatalf("%d conflicts counted, want 2", got)
	}
}
