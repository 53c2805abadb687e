package asyncevent_test

import (
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// CheckCapacity checks the open FIRST_COME events, at most max of them,
// and names those whose seat count disagrees with their SUCCEEDED requests.
func TestCheckCapacity(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "a", 3)
	firstCome(t, env, "b", 3)
	firstCome(t, env, "closed", 3)
	if _, err := env.Service.CloseEvent(ctx, "closed"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Service.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lot", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	checked, broken, err := env.Service.CheckCapacity(ctx, 100)
	if err != nil || checked != 2 || len(broken) != 0 {
		t.Fatalf("healthy: checked %d, broken %v, %v", checked, broken, err)
	}
	// A seat taken with no SUCCEEDED request behind it.
	if _, err := env.DDB.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(env.DDB.Table.Name()),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "EVENT#b"}, "SK": &types.AttributeValueMemberS{Value: "CAPACITY"},
		},
		UpdateExpression:          aws.String("SET capacityRemaining = :r"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberN{Value: "2"}},
	}); err != nil {
		t.Fatal(err)
	}
	checked, broken, err = env.Service.CheckCapacity(ctx, 100)
	if err != nil || checked != 2 || !slices.Equal(broken, []string{"b"}) {
		t.Fatalf("broken b: checked %d, broken %v, %v", checked, broken, err)
	}
	if checked, _, err = env.Service.CheckCapacity(ctx, 1); err != nil || checked != 1 {
		t.Fatalf("max 1: checked %d, %v", checked, err)
	}
}
