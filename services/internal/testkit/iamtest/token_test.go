package iamtest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
)

// A stream is read with the template's policy form (GetAtt StreamArn):
// the stand-in's stream ARN, whatever its label, is the canonical one,
// and GetRecords is authorized on the stream its shard iterator came from.
func TestStreamReadByIterator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStand(t)
	s.createTable(t, true)
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item("p")}); err != nil {
		t.Fatal(err)
	}
	desc, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	if err != nil || desc.Table.LatestStreamArn == nil {
		t.Fatalf("describe table: %v (stream %v)", err, desc)
	}
	doc := map[string]any{"Statement": []any{allow([]any{"dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords"},
		[]any{map[string]any{"Fn::GetAtt": []any{"Table", "StreamArn"}}})}}
	p, err := ResolvePolicy(doc, map[string]string{"Table.StreamArn": s.a.Stream(s.table)})
	if err != nil {
		t.Fatal(err)
	}
	e := New(p, s.a)
	st := stream.NewClient(e.Attach(s.cfg))
	ds, err := st.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	if err != nil || len(ds.StreamDescription.Shards) == 0 {
		t.Fatalf("DescribeStream (%s): %v (%v)", *desc.Table.LatestStreamArn, err, ds)
	}
	it, err := st.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: desc.Table.LatestStreamArn,
		ShardId: ds.StreamDescription.Shards[0].ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatalf("GetShardIterator: %v", err)
	}
	recs, err := st.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil || len(recs.Records) != 1 {
		t.Fatalf("GetRecords: %v (%v), want the one record", err, recs)
	}
	e.SetPolicy(p.Without("dynamodb:GetRecords"))
	_, err = st.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: recs.NextShardIterator})
	wantDenied(t, err, "dynamodb:GetRecords", s.a.Stream(s.table))

	// Dropping GetShardIterator from the policy would refuse the one
	// GetShardIterator call made.
	denied := Replay(p.Without("dynamodb:GetShardIterator"), e.Checks())
	want := []Check{{Operation: "DynamoDB Streams.GetShardIterator", Action: "dynamodb:GetShardIterator", Resource: s.a.Stream(s.table)}}
	if !slices.Equal(denied, want) {
		t.Errorf("Replay = %v, want %v", denied, want)
	}
}

// A redrive without DestinationArn needs sqs:SendMessage on the DLQ's
// source queue (RedriveTo); its task handle is then known to be the DLQ's.
func TestRedriveToSourceNeedsSendMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStand(t)
	dlqURL, dlq := s.createQueue(t, nil)
	attrs, err := s.q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dlqURL),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	dlqARN := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	_, src := s.createQueue(t, map[string]string{"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"3"}`, dlqARN)})
	onDLQ := allow([]any{"sqs:StartMessageMoveTask", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:CancelMessageMoveTask"}, s.a.Queue(dlq))
	e := New(policy(t, onDLQ), s.a)
	e.RedriveTo = map[string]string{s.a.Queue(dlq): s.a.Queue(src)}
	q := awsclient.SQS(e.Attach(s.cfg))
	_, err = q.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqARN)})
	wantDenied(t, err, "sqs:SendMessage", s.a.Queue(src))

	e.SetPolicy(policy(t, onDLQ, allow("sqs:SendMessage", s.a.Queue(src))))
	out, err := q.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqARN)})
	if err != nil {
		t.Fatalf("with sqs:SendMessage on the source queue: %v", err)
	}
	if out.TaskHandle == nil {
		t.Fatal("StartMessageMoveTask returned no task handle")
	}
	_, err = q.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: out.TaskHandle})
	if IsAccessDenied(err) {
		t.Fatalf("CancelMessageMoveTask: %v", err)
	}
	checks := e.Checks()
	if last := checks[len(checks)-1]; last.Action != "sqs:CancelMessageMoveTask" || last.Resource != s.a.Queue(dlq) || !last.Allowed {
		t.Errorf("CancelMessageMoveTask's check %v, want sqs:CancelMessageMoveTask on the DLQ, allowed", last)
	}
}
