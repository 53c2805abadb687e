package iamtest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

const queueURL = "http://127.0.0.1:9324/000000000000/q"

// pairs renders checks as "action on resource" lines, for comparison.
func pairs(checks []Check) []string {
	out := make([]string, len(checks))
	for i, c := range checks {
		out[i] = c.Action + " on " + c.Resource
	}
	return out
}

func TestAuthorizations(t *testing.T) {
	a := testARNs
	on := func(action, res string) string { return action + " on " + res }
	cases := []struct {
		name, service, op string
		params            any
		want              []string
	}{
		{"GetItem", "DynamoDB", "GetItem", &dynamodb.GetItemInput{TableName: aws.String("T")}, []string{on("dynamodb:GetItem", a.Table("T"))}},
		{"GetItem by table ARN", "DynamoDB", "GetItem", &dynamodb.GetItemInput{TableName: aws.String("arn:aws:dynamodb:ddblocal:000000000000:table/T")},
			[]string{on("dynamodb:GetItem", a.Table("T"))}},
		{"DescribeTimeToLive", "DynamoDB", "DescribeTimeToLive", &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("T")},
			[]string{on("dynamodb:DescribeTimeToLive", a.Table("T"))}},
		{"Query on the table", "DynamoDB", "Query", &dynamodb.QueryInput{TableName: aws.String("T")}, []string{on("dynamodb:Query", a.Table("T"))}},
		{"Query on an index", "DynamoDB", "Query", &dynamodb.QueryInput{TableName: aws.String("T"), IndexName: aws.String("GSI1")},
			[]string{on("dynamodb:Query", a.Index("T", "GSI1"))}},
		{"Scan on an index", "DynamoDB", "Scan", &dynamodb.ScanInput{TableName: aws.String("T"), IndexName: aws.String("GSI2")},
			[]string{on("dynamodb:Scan", a.Index("T", "GSI2"))}},
		{"TransactWriteItems", "DynamoDB", "TransactWriteItems", &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String("T")}},
			{Update: &types.Update{TableName: aws.String("U")}},
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String("T")}},
			{Put: &types.Put{TableName: aws.String("T")}}, // the same check once
		}}, []string{on("dynamodb:PutItem", a.Table("T")), on("dynamodb:UpdateItem", a.Table("U")), on("dynamodb:ConditionCheckItem", a.Table("T"))}},
		{"TransactWriteItems Delete", "DynamoDB", "TransactWriteItems", &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Delete: &types.Delete{TableName: aws.String("T")}},
		}}, []string{on("dynamodb:DeleteItem", a.Table("T"))}},
		{"TransactGetItems", "DynamoDB", "TransactGetItems", &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
			{Get: &types.Get{TableName: aws.String("T")}}, {Get: &types.Get{TableName: aws.String("U")}},
		}}, []string{on("dynamodb:GetItem", a.Table("T")), on("dynamodb:GetItem", a.Table("U"))}},
		{"BatchGetItem", "DynamoDB", "BatchGetItem", &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"U": {}, "T": {}}},
			[]string{on("dynamodb:BatchGetItem", a.Table("T")), on("dynamodb:BatchGetItem", a.Table("U"))}},
		{"BatchWriteItem", "DynamoDB", "BatchWriteItem", &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"T": nil}},
			[]string{on("dynamodb:BatchWriteItem", a.Table("T"))}},
		{"ListTables", "DynamoDB", "ListTables", &dynamodb.ListTablesInput{}, []string{on("dynamodb:ListTables", "*")}},
		{"DescribeStream", "DynamoDB Streams", "DescribeStream",
			&dynamodbstreams.DescribeStreamInput{StreamArn: aws.String("arn:aws:dynamodb:ddblocal:000000000000:table/T/stream/2024-02-12T18:57:26.492")},
			[]string{on("dynamodb:DescribeStream", a.Stream("T"))}},
		{"GetShardIterator", "DynamoDB Streams", "GetShardIterator",
			&dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String("arn:aws:dynamodb:ddblocal:000000000000:table/T/stream/x")},
			[]string{on("dynamodb:GetShardIterator", a.Stream("T"))}},
		{"ListStreams", "DynamoDB Streams", "ListStreams", &dynamodbstreams.ListStreamsInput{TableName: aws.String("T")}, []string{on("dynamodb:ListStreams", "*")}},
		{"SendMessage", "SQS", "SendMessage", &sqs.SendMessageInput{QueueUrl: aws.String(queueURL)}, []string{on("sqs:SendMessage", a.Queue("q"))}},
		{"ReceiveMessage", "SQS", "ReceiveMessage", &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL)}, []string{on("sqs:ReceiveMessage", a.Queue("q"))}},
		{"SendMessageBatch", "SQS", "SendMessageBatch", &sqs.SendMessageBatchInput{QueueUrl: aws.String(queueURL)}, []string{on("sqs:SendMessage", a.Queue("q"))}},
		{"DeleteMessageBatch", "SQS", "DeleteMessageBatch", &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(queueURL)}, []string{on("sqs:DeleteMessage", a.Queue("q"))}},
		{"ChangeMessageVisibilityBatch", "SQS", "ChangeMessageVisibilityBatch", &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queueURL)},
			[]string{on("sqs:ChangeMessageVisibility", a.Queue("q"))}},
		{"GetQueueUrl", "SQS", "GetQueueUrl", &sqs.GetQueueUrlInput{QueueName: aws.String("q")}, []string{on("sqs:GetQueueUrl", a.Queue("q"))}},
		{"CreateQueue", "SQS", "CreateQueue", &sqs.CreateQueueInput{QueueName: aws.String("q")}, []string{on("sqs:CreateQueue", a.Queue("q"))}},
		{"SetQueueAttributes", "SQS", "SetQueueAttributes", &sqs.SetQueueAttributesInput{QueueUrl: aws.String(queueURL)},
			[]string{on("sqs:SetQueueAttributes", a.Queue("q"))}},
		{"StartMessageMoveTask to a destination", "SQS", "StartMessageMoveTask", &sqs.StartMessageMoveTaskInput{
			SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq"), DestinationArn: aws.String("arn:aws:sqs:us-east-1:000000000000:other")},
			[]string{on("sqs:StartMessageMoveTask", a.Queue("dlq")), on("sqs:ReceiveMessage", a.Queue("dlq")), on("sqs:DeleteMessage", a.Queue("dlq")),
				on("sqs:GetQueueAttributes", a.Queue("dlq")), on("sqs:SendMessage", a.Queue("other"))}},
		{"ListMessageMoveTasks", "SQS", "ListMessageMoveTasks", &sqs.ListMessageMoveTasksInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq")},
			[]string{on("sqs:ListMessageMoveTasks", a.Queue("dlq"))}},
		{"GetObject", "S3", "GetObject", &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("o/e/raw/1.jpg")},
			[]string{on("s3:GetObject", "arn:aws:s3:::b/o/e/raw/1.jpg")}},
		{"PutEvents on two buses", "EventBridge", "PutEvents", &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
			{EventBusName: aws.String("pacer")}, {}, {EventBusName: aws.String("arn:aws:events:us-east-1:000000000000:event-bus/pacer")},
		}}, []string{on("events:PutEvents", a.Bus("pacer")), on("events:PutEvents", a.Bus("default"))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checks, err := Authorizations(c.service, c.op, c.params, a)
			if err != nil {
				t.Fatalf("Authorizations: %v", err)
			}
			if got := pairs(checks); !slices.Equal(got, c.want) {
				t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(c.want, "\n\t"))
			}
			for _, ch := range checks {
				if ch.Operation != c.service+"."+c.op || ch.Allowed || ch.Error != "" {
					t.Errorf("check %+v: want Operation %s.%s, not Allowed, no Error", ch, c.service, c.op)
				}
			}
		})
	}
}

// A redrive without DestinationArn sends the messages back to the DLQ's
// source queue: the enforcer's RedriveTo names it, and without it the call
// cannot be evaluated.
func TestAuthorizationsRedriveToSource(t *testing.T) {
	a := testARNs
	in := &sqs.StartMessageMoveTaskInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq")}
	if _, err := Authorizations("SQS", "StartMessageMoveTask", in, a); err == nil || !strings.Contains(err.Error(), "RedriveTo") {
		t.Errorf("without RedriveTo: %v, want an error naming RedriveTo", err)
	}
	e := New(Policy{}, a)
	e.RedriveTo = map[string]string{a.Queue("dlq"): a.Queue("q")}
	checks, err := e.evaluate("SQS", "StartMessageMoveTask", in)
	if !IsAccessDenied(err) {
		t.Errorf("evaluate under the zero policy: %v, want AccessDenied", err)
	}
	want := []string{"sqs:StartMessageMoveTask on " + a.Queue("dlq"), "sqs:ReceiveMessage on " + a.Queue("dlq"), "sqs:DeleteMessage on " + a.Queue("dlq"),
		"sqs:GetQueueAttributes on " + a.Queue("dlq"), "sqs:SendMessage on " + a.Queue("q")}
	if got := pairs(checks); !slices.Equal(got, want) {
		t.Errorf("got\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func TestAuthorizationsRefuses(t *testing.T) {
	a := testARNs
	cases := []struct {
		name, service, op string
		params            any
		noRule            bool
	}{
		{"an unknown operation", "SQS", "AddPermission", &sqs.AddPermissionInput{QueueUrl: aws.String(queueURL)}, true},
		{"an unknown service", "Lambda", "Invoke", nil, true},
		{"S3 GetObject without a key", "S3", "GetObject", &s3.GetObjectInput{Bucket: aws.String("b")}, false},
		{"no table", "DynamoDB", "GetItem", &dynamodb.GetItemInput{}, false},
		{"a transaction item of no kind", "DynamoDB", "TransactWriteItems",
			&dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{}}}, false},
		{"a transaction item without a table", "DynamoDB", "TransactWriteItems",
			&dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{}}}}, false},
		{"wrong params", "DynamoDB", "TransactWriteItems", &dynamodb.PutItemInput{}, false},
		{"a GetRecords iterator never seen", "DynamoDB Streams", "GetRecords", &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String("it")}, false},
		{"a table ARN as a queue", "SQS", "ListMessageMoveTasks", &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(a.Table("T"))}, false},
		{"no entries", "EventBridge", "PutEvents", &eventbridge.PutEventsInput{}, false},
		{"a queue name for a URL", "SQS", "SendMessageBatch", &sqs.SendMessageBatchInput{QueueUrl: aws.String("q"),
			Entries: []sqstypes.SendMessageBatchRequestEntry{{}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checks, err := Authorizations(c.service, c.op, c.params, a)
			if err == nil {
				t.Fatalf("Authorizations = %v, want an error", checks)
			}
			if errors.Is(err, ErrNoRule) != c.noRule {
				t.Errorf("error %q: wraps ErrNoRule %v, want %v", err, !c.noRule, c.noRule)
			}
			if !strings.Contains(err.Error(), c.service+" "+c.op) {
				t.Errorf("error %q does not name %s %s", err, c.service, c.op)
			}
		})
	}
}
