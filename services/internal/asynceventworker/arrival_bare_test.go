package asynceventworker

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// bareAllocator is the baseline Pacer's arrival allocator is measured
// against (BenchmarkArrivalCost): a run over an event whose allocator
// already has a position and seats left, done the plain way, with the
// same AWS SDK calls and inputs as Pacer's (TestBareAllocatesAsPacerDoes):
// the lease, then, until a read finds nothing, the event index's Query,
// the BatchGetItem of its requests, the candidates decided in (queuedAt,
// requestId) order in one transaction; then the release. No metrics, no
// read-ahead, no search behind the position for late requests, no
// promotion of QUEUED requests, no paging past the Query's first page or
// retry of a BatchGetItem's unprocessed keys (the fixture has none).
type bareAllocator struct {
	bareWorker
	owner string
}

// bareLateness is Pacer's default Lateness.Max: the watermark is
// now minus this.
const bareLateness = 3500

// bareCapacity is what the allocator reads of the EventCapacity item.
type bareCapacity struct {
	Remaining int64  `dynamodbav:"capacityRemaining"`
	Fence     int64  `dynamodbav:"allocFence"`
	QueuedAt  int64  `dynamodbav:"allocQueuedAt"`
	RequestID string `dynamodbav:"allocRequestId"`
}

// bareRequest is what the allocator reads of a request.
type bareRequest struct {
	RequestID   string `dynamodbav:"requestId"`
	Status      string `dynamodbav:"status"`
	UIPhase     string `dynamodbav:"uiPhase"`
	RequestedAt int64  `dynamodbav:"requestedAt"`
	QueuedAt    int64  `dynamodbav:"queuedAt"`
	StartedAt   int64  `dynamodbav:"startedAt"`
	FinishedAt  int64  `dynamodbav:"finishedAt"`
	RequeuedAt  int64  `dynamodbav:"requeuedAt"`
	Attempts    int64  `dynamodbav:"attempts"`
}

// allocatingForward is Pacer's condition that a request is PROCESSING
// (:0) in phase ALLOCATING (:1) and that its times only move forward.
const allocatingForward = "((((((#0 = :0) AND (#1 = :1)) AND ((attribute_not_exists (#2)) OR (#2 < :2))) AND ((attribute_not_exists (#3)) OR (#3 < :3))) AND ((attribute_not_exists (#4)) OR (#4 < :4))) AND ((attribute_not_exists (#5)) OR (#5 < :5))) AND ((attribute_not_exists (#6)) OR (#6 < :6))"

// allocate runs the allocator of eventID once and returns how many
// requests it decided.
func (b *bareAllocator) allocate(ctx context.Context, eventID string) (int, error) {
	capKey := map[string]types.AttributeValue{"PK": s("EVENT#" + eventID), "SK": s("CAPACITY")}
	now := time.Now().UnixMilli()
	out, err := b.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &b.table, Key: capKey,
		ConditionExpression:       aws.String("(attribute_exists (#0)) AND ((attribute_not_exists (#1)) OR (#1 < :0))"),
		UpdateExpression:          aws.String("ADD #2 :1\nSET #3 = :2, #1 = :3\n"),
		ExpressionAttributeNames:  map[string]string{"#0": "PK", "#1": "allocLeaseUntil", "#2": "allocFence", "#3": "allocOwner"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":0": n(now), ":1": n(1), ":2": s(b.owner), ":3": n(now + 10_000)},
		ReturnValues:              types.ReturnValueAllNew, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	if err != nil {
		return 0, err
	}
	var c bareCapacity
	if err := attributevalue.UnmarshalMap(out.Attributes, &c); err != nil {
		return 0, err
	}
	defer b.release(ctx, capKey, c.Fence)
	decided := 0
	for {
		batch, err := b.candidates(ctx, eventID, c.QueuedAt, now-bareLateness)
		if err != nil || len(batch) == 0 {
			return decided, err
		}
		if err := b.decide(ctx, capKey, &c, batch); err != nil {
			return decided, err
		}
		decided += len(batch)
	}
}

// candidates reads the event index from the millisecond from up to before
// and returns the PROCESSING/ALLOCATING requests it shows, in order, at
// most 49.
func (b *bareAllocator) candidates(ctx context.Context, eventID string, from, before int64) ([]bareRequest, error) {
	q, err := b.db.Query(ctx, &dynamodb.QueryInput{TableName: &b.table, IndexName: aws.String("GSI2"),
		KeyConditionExpression:   aws.String("(#0 = :0) AND (#1 BETWEEN :1 AND :2)"),
		ExpressionAttributeNames: map[string]string{"#0": "GSI2PK", "#1": "GSI2SK"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":0": s("EVENT#" + eventID), ":1": s(fmt.Sprintf("QAT#%013d#", from)),
			":2": s(fmt.Sprintf("QAT#%013d#~", before-1))},
		Limit: aws.Int32(1001), ScanIndexForward: aws.Bool(true)})
	if err != nil || len(q.Items) == 0 {
		return nil, err
	}
	keys := make([]map[string]types.AttributeValue, len(q.Items))
	for i, e := range q.Items {
		keys[i] = map[string]types.AttributeValue{"PK": e["PK"], "SK": e["SK"]}
	}
	got, err := b.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{b.table: {Keys: keys}}})
	if err != nil {
		return nil, err
	}
	var rs []bareRequest
	if err := attributevalue.UnmarshalListOfMaps(got.Responses[b.table], &rs); err != nil {
		return nil, err
	}
	rs = slices.DeleteFunc(rs, func(r bareRequest) bool { return r.Status != "PROCESSING" || r.UIPhase != "ALLOCATING" })
	slices.SortFunc(rs, func(x, y bareRequest) int {
		return cmp.Or(cmp.Compare(x.QueuedAt, y.QueuedAt), cmp.Compare(x.RequestID, y.RequestID))
	})
	return rs[:min(len(rs), 49)], nil
}

// decide writes batch's decisions in one transaction, winners while c
// has seats left, and moves c's position to the batch's last request.
func (b *bareAllocator) decide(ctx context.Context, capKey map[string]types.AttributeValue, c *bareCapacity, batch []bareRequest) error {
	items := make([]types.TransactWriteItem, 1, 1+2*len(batch))
	wins, last := int64(0), int64(0)
	for _, r := range batch {
		at := max(time.Now().UnixMilli(), r.RequestedAt+1, r.QueuedAt+1, r.StartedAt+1, r.FinishedAt+1, r.RequeuedAt+1)
		last = max(last, at)
		to, result, code := "REJECTED", "REJECTED", "REJECTED_CAPACITY"
		if wins < c.Remaining {
			wins++
			to, result, code = "SUCCEEDED", "SUCCESS", "SUCCESS"
		}
		items = append(items, types.TransactWriteItem{Update: &types.Update{TableName: &b.table,
			Key: map[string]types.AttributeValue{"PK": s("REQ#" + r.RequestID), "SK": s("META")}, ConditionExpression: aws.String(allocatingForward),
			UpdateExpression: aws.String("REMOVE #7, #8\nSET #0 = :7, #5 = :8, #9 = :9, #1 = :10, #10 = :11, #11 = :12, #12 = :13\n"),
			ExpressionAttributeNames: map[string]string{"#0": "status", "#1": "uiPhase", "#2": "requestedAt", "#3": "queuedAt", "#4": "startedAt", "#5": "finishedAt",
				"#6": "requeuedAt", "#7": "GSI3PK", "#8": "GSI3SK", "#9": "attempts", "#10": "uiResult", "#11": "resultCode", "#12": "workerId"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":0": s("PROCESSING"), ":1": s("ALLOCATING"), ":2": n(at), ":3": n(at), ":4": n(at), ":5": n(at),
				":6": n(at), ":7": s(to), ":8": n(at), ":9": n(r.Attempts), ":10": s("ALLOCATED"), ":11": s(result), ":12": s(code), ":13": s(b.workerID)},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
			b.logPut(r.RequestID, "PROCESSING", to, at))
	}
	end := batch[len(batch)-1]
	items[0] = types.TransactWriteItem{Update: &types.Update{TableName: &b.table, Key: capKey,
		ConditionExpression: aws.String("((#0 >= :0) AND (#1 = :1)) AND (#2 = :2)"),
		UpdateExpression:    aws.String("ADD #0 :3\nSET #3 = :4, #2 = :5, #4 = :6, #5 = :7\n"),
		ExpressionAttributeNames: map[string]string{"#0": "capacityRemaining", "#1": "allocFence", "#2": "allocRequestId", "#3": "allocQueuedAt",
			"#4": "updatedAt", "#5": "allocLeaseUntil"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":0": n(wins), ":1": n(c.Fence), ":2": s(c.RequestID), ":3": n(-wins),
			":4": n(end.QueuedAt), ":5": s(end.RequestID), ":6": n(last), ":7": n(time.Now().UnixMilli() + 10_000)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}
	if _, err := b.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
		return err
	}
	c.Remaining -= wins
	c.QueuedAt, c.RequestID = end.QueuedAt, end.RequestID
	return nil
}

// release gives the lease taken with fence back.
func (b *bareAllocator) release(ctx context.Context, capKey map[string]types.AttributeValue, fence int64) {
	_, _ = b.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &b.table, Key: capKey,
		ConditionExpression: aws.String("(#0 = :0) AND (#1 = :1)"), UpdateExpression: aws.String("REMOVE #2\n"),
		ExpressionAttributeNames:  map[string]string{"#0": "allocOwner", "#1": "allocFence", "#2": "allocLeaseUntil"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":0": s(b.owner), ":1": n(fence)},
		ReturnValues:              types.ReturnValueNone, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
}
