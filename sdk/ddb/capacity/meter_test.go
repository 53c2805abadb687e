package capacity_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/capacity"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// TestMeterAgainstDynamoDBLocal writes real items through the Meter and
// compares its prices with the consumed capacity DynamoDB Local reports
// for the table and each index.
func TestMeterAgainstDynamoDBLocal(t *testing.T) {
	ctx := context.Background()
	env := ddbtest.New(t, &costSchema)
	name := env.Table.Name()
	m := capacity.NewMeter(env.Client, map[string]*ddb.Schema{name: &costSchema})
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item := capacity.Item{"PK": s("A"), "SK": s("B"), "APK": s("E"), "ASK": s("1"), "KPK": s("E"), "KSK": s("1"),
		"fixed": s("f"), "blob": s(strings.Repeat("x", 1500))}
	out, err := m.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item,
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil {
		t.Fatal(err)
	}
	calls := m.Take()
	if len(calls) != 1 || len(calls[0].Writes) != 1 {
		t.Fatalf("calls: %+v", calls)
	}
	w := calls[0].Writes[0]
	if w.Size != capacity.Size(item) || w.Units != 2 || w.IndexUnits("ALL") != 2 || w.IndexUnits("KEYS") != 1 || w.IndexUnits("INC") != 1 {
		t.Fatalf("put: %+v", w)
	}
	cc := out.ConsumedCapacity
	if cc == nil || cc.Table == nil || len(cc.GlobalSecondaryIndexes) != 3 {
		t.Fatalf("DynamoDB Local reported no consumed capacity per index: %+v", cc)
	}
	if got := aws.ToFloat64(cc.Table.CapacityUnits); got != float64(w.Units) {
		t.Errorf("table units: DynamoDB Local %v, Meter %d", got, w.Units)
	}
	for ix, c := range cc.GlobalSecondaryIndexes {
		if got := aws.ToFloat64(c.CapacityUnits); got != float64(w.IndexUnits(ix)) {
			t.Errorf("index %s units: DynamoDB Local %v, Meter %d", ix, got, w.IndexUnits(ix))
		}
	}

	// A transactional status change: twice the table's units, only the
	// ALL index written.
	_, err = m.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
		Update: &types.Update{TableName: aws.String(name), Key: capacity.Item{"PK": s("A"), "SK": s("B")},
			UpdateExpression:          aws.String("SET #s = :s"),
			ExpressionAttributeNames:  map[string]string{"#s": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": s("DONE")}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	calls = m.Take()
	w = calls[0].Writes[0]
	if w.Units != 4 || len(w.Indexes) != 1 || w.Indexes[0].Index != "ALL" || w.Indexes[0].PK != "E" {
		t.Fatalf("tx update: %+v", w)
	}

	// A query of the KEYS index reads entries of keys only; the ALL
	// index's read the whole item.
	for _, c := range []struct {
		index string
		units float64
	}{{"KEYS", 0.5}, {"ALL", 0.5}} {
		_, err := m.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), IndexName: aws.String(c.index),
			KeyConditionExpression:    aws.String("#p = :p"),
			ExpressionAttributeNames:  map[string]string{"#p": map[string]string{"KEYS": "KPK", "ALL": "APK"}[c.index]},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("E")}})
		if err != nil {
			t.Fatal(err)
		}
		r := m.Take()[0].Reads[0]
		if r.Items != 1 || r.Units != c.units || r.PK != "E" {
			t.Fatalf("query %s: %+v", c.index, r)
		}
		if c.index == "KEYS" && r.Size >= 100 || c.index == "ALL" && r.Size < 1500 {
			t.Fatalf("query %s read %d bytes", c.index, r.Size)
		}
	}
}
