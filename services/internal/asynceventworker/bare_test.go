package asynceventworker

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/consumer"
)

// bareWorker is the baseline Pacer's worker is measured against (the cost
// benchmarks, cost_bench_test.go): a delivery of a FIRST_COME `delivery`
// event decided the plain way, with encoding/json and the same AWS SDK
// calls with the same inputs as Pacer's (TestBareDecidesAsPacerDoes):
// the PROCESSING transaction, then the decision's with the seat. No
// metrics, no retries of its own, no lost-message or DLQ handling, no
// cache but the event known up front.
type bareWorker struct {
	db       *dynamodb.Client
	table    string
	workerID string
}

type bareMessage struct {
	V         int    `json:"v"`
	RequestID string `json:"requestId"`
	EventID   string `json:"eventId"`
	UserID    string `json:"userId"`
	EventType string `json:"eventType"`
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// timesForward is Pacer's condition that a request's times only move
// forward (and that it is in the status :0).
const timesForward = "(((((#0 = :0) AND ((attribute_not_exists (#1)) OR (#1 < :1))) AND ((attribute_not_exists (#2)) OR (#2 < :2))) AND ((attribute_not_exists (#3)) OR (#3 < :3))) AND ((attribute_not_exists (#4)) OR (#4 < :4))) AND ((attribute_not_exists (#5)) OR (#5 < :5))"

var createOnly = map[string]string{"#0": "PK"}

func (b *bareWorker) logPut(id, from, to string, at int64) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{TableName: &b.table, ConditionExpression: aws.String("attribute_not_exists (#0)"), ExpressionAttributeNames: createOnly,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		Item: map[string]types.AttributeValue{"PK": s("REQ#" + id), "SK": s(fmt.Sprintf("LOG#%d#%s", at, to)), "entityType": s("STATUS_LOG"),
			"requestId": s(id), "fromStatus": s(from), "toStatus": s(to), "occurredAt": n(at), "ttl": n(at/1000 + 30*24*3600)}}}
}

func (b *bareWorker) handle(ctx context.Context, msg consumer.Message) bool {
	var m bareMessage
	if err := json.Unmarshal([]byte(msg.Body), &m); err != nil || m.V != 1 || m.RequestID == "" || m.EventID == "" || m.UserID == "" {
		return true // malformed: nothing to do
	}
	key := map[string]types.AttributeValue{"PK": s("REQ#" + m.RequestID), "SK": s("META")}
	at := time.Now().UnixMilli()
	qat := fmt.Sprintf("QAT#%d#REQ#%s", at, m.RequestID)
	_, err := b.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &b.table, Key: key, ConditionExpression: aws.String(timesForward),
			UpdateExpression: aws.String("REMOVE #6, #7\nSET #0 = :6, #3 = :7, #8 = :8, #9 = :9, #2 = if_not_exists(#2, :10), #10 = if_not_exists(#10, :11), #11 = if_not_exists(#11, :12), #12 = if_not_exists(#12, :13), #13 = if_not_exists(#13, :14)\n"),
			ExpressionAttributeNames: map[string]string{"#0": "status", "#1": "requestedAt", "#2": "queuedAt", "#3": "startedAt", "#4": "finishedAt", "#5": "requeuedAt",
				"#6": "GSI3PK", "#7": "GSI3SK", "#8": "attempts", "#9": "workerId", "#10": "GSI1PK", "#11": "GSI1SK", "#12": "GSI2PK", "#13": "GSI2SK"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":0": s("QUEUED"), ":1": n(at), ":2": n(at), ":3": n(at), ":4": n(at), ":5": n(at),
				":6": s("PROCESSING"), ":7": n(at), ":8": n(int64(msg.ReceiveCount)), ":9": s(b.workerID), ":10": n(at), ":11": s("USER#" + m.UserID), ":12": s(qat),
				":13": s("EVENT#" + m.EventID), ":14": s(qat)},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		b.logPut(m.RequestID, "QUEUED", "PROCESSING", at),
	}})
	if err != nil {
		return false
	}
	at++
	_, err = b.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &b.table, Key: key, ConditionExpression: aws.String(timesForward),
			UpdateExpression: aws.String("REMOVE #6, #7\nSET #0 = :6, #4 = :7, #8 = :8, #9 = :9, #10 = :10, #11 = :11\n"),
			ExpressionAttributeNames: map[string]string{"#0": "status", "#1": "requestedAt", "#2": "queuedAt", "#3": "startedAt", "#4": "finishedAt", "#5": "requeuedAt",
				"#6": "GSI3PK", "#7": "GSI3SK", "#8": "attempts", "#9": "uiResult", "#10": "resultCode", "#11": "workerId"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":0": s("PROCESSING"), ":1": n(at), ":2": n(at), ":3": n(at), ":4": n(at), ":5": n(at),
				":6": s("SUCCEEDED"), ":7": n(at), ":8": n(int64(msg.ReceiveCount)), ":9": s("SUCCESS"), ":10": s("SUCCESS"), ":11": s(b.workerID)},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		b.logPut(m.RequestID, "PROCESSING", "SUCCEEDED", at),
		{Update: &types.Update{TableName: &b.table, Key: map[string]types.AttributeValue{"PK": s("EVENT#" + m.EventID), "SK": s("CAPACITY")},
			ConditionExpression: aws.String("#0 >= :0"), UpdateExpression: aws.String("ADD #0 :1\nSET #1 = :2\n"),
			ExpressionAttributeNames:            map[string]string{"#0": "capacityRemaining", "#1": "updatedAt"},
			ExpressionAttributeValues:           map[string]types.AttributeValue{":0": n(1), ":1": n(-1), ":2": n(at)},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}})
	return err == nil
}
