package dynamostore_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// LimitsDynamo refuses what DynamoDB's per-partition limits would, as
// DynamoDB refuses it: by item size, per partition key of the table and
// of each index, an index throttling the table write that feeds it, and
// transactions cancelled with ThrottlingError, which ddb.DB.Transact
// retries until the partition has the units again.
func TestLimitsDynamo(t *testing.T) {
	t.Parallel()
	schema := dynamostore.ProjectAllSchema
	schema.Stream = ""
	env := ddbtest.New(t, &schema)
	table := env.Table.Name()
	// Scale 100: 10 WCU/s and 30 RCU/s per partition.
	lim := asynceventtest.NewLimitsDynamo(env.Client, 100, map[string]*ddb.Schema{table: &schema})
	// The buckets' clock moves only when the test moves it.
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	lim.Now = func() time.Time { return time.Unix(0, clock.Load()) }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	put := func(pk, sk, gsi2 string, size int) error {
		item := map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk), "blob": s(strings.Repeat("x", size))}
		if gsi2 != "" {
			item["GSI2PK"], item["GSI2SK"] = s(gsi2), s(sk)
		}
		_, err := lim.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
		return err
	}
	throttled := func(err error) bool {
		var pe *types.ProvisionedThroughputExceededException
		return errors.As(err, &pe)
	}

	// By size: 2.5 KB items cost 3 WCU; a partition's 10 take three.
	for i := range 3 {
		if err := put("REQ#big", string(rune('a'+i)), "", 2500); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	if err := put("REQ#big", "d", "", 2500); !throttled(err) {
		t.Fatalf("fourth 3-WCU put on a 10 WCU/s partition: %v, want ProvisionedThroughputExceededException", err)
	}
	// Another partition key is another partition.
	if err := put("REQ#other", "a", "", 2500); err != nil {
		t.Fatalf("put on another partition: %v", err)
	}

	// Back-pressure: ten items of ten partitions feed one GSI2 partition;
	// the eleventh table write is refused for the index.
	for i := range 10 {
		if err := put("REQ#r"+string(rune('a'+i)), "META", "EVENT#hot", 100); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	err := put("REQ#rk", "META", "EVENT#hot", 100)
	if !throttled(err) || !strings.Contains(err.Error(), "global secondary indexes") {
		t.Fatalf("11th write feeding one GSI2 partition: %v, want refused for the index", err)
	}
	if n := lim.Throttled("W", "GSI2", "EVENT#hot"); n != 1 {
		t.Fatalf("GSI2 EVENT#hot throttles: %d, want 1", n)
	}
	if n := lim.Throttled("W", "", "REQ#big"); n != 1 {
		t.Fatalf("table REQ#big throttles: %d, want 1", n)
	}
	if got, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
		Key: map[string]types.AttributeValue{"PK": s("REQ#rk"), "SK": s("META")}, ConsistentRead: aws.Bool(true)}); err != nil || len(got.Item) != 0 {
		t.Fatalf("a refused write was applied: %v, %v", got, err)
	}

	// A transaction (2 WCU per item) on a spent partition: cancelled with
	// ThrottlingError for that item only, nothing applied.
	tx := func(pk string) *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String(table), Item: map[string]types.AttributeValue{"PK": s("REQ#fresh"), "SK": s("META")}}},
			{Put: &types.Put{TableName: aws.String(table), Item: map[string]types.AttributeValue{"PK": s(pk), "SK": s("LOG")}}},
		}}
	}
	_, err = lim.TransactWriteItems(ctx, tx("REQ#big"))
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 ||
		aws.ToString(tce.CancellationReasons[0].Code) != "None" || aws.ToString(tce.CancellationReasons[1].Code) != "ThrottlingError" {
		t.Fatalf("transaction on a spent partition: %v", err)
	}
	// Through the SDK, the cancellation is retried with backoff until the
	// bucket refills.
	db := ddb.New(lim, ddb.Config{})
	logs := ddb.NewEntity(db.Table(table, &schema), "STATUS_LOG", func(m *map[string]string) ddb.Key { return ddb.Key{PK: (*m)["p"], SK: "LOG2"} })
	big := map[string]string{"p": "REQ#big", "blob": strings.Repeat("y", 2500)}
	before := lim.Throttled("W", "", "REQ#big")
	done := make(chan error, 1)
	go func() {
		done <- db.Transact(ctx, logs.Put(&big), logs.Update(ddb.Key{PK: "REQ#x", SK: "LOG2"}).Set("n", 1).
			If(expression.AttributeNotExists(expression.Name("PK"))).Op())
	}()
	asynceventtest.Eventually(t, 10*time.Second, "the transaction to be throttled", func() (bool, error) {
		return lim.Throttled("W", "", "REQ#big") > before, nil
	})
	clock.Add(int64(time.Second)) // a second later the partition has its units again
	if err := <-done; err != nil {
		t.Fatalf("Transact did not retry a throttled transaction until it passed: %v", err)
	}
}
