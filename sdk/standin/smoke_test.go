package standin_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/standin"
)

func clients(t *testing.T) (*dynamodb.Client, *sqs.Client) {
	t.Helper()
	cfg, err := awsclient.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return awsclient.DynamoDB(cfg), awsclient.SQS(cfg)
}

func newTable(t *testing.T, db *dynamodb.Client) string {
	t.Helper()
	name := fmt.Sprintf("smoke-%s-%d", t.Name(), time.Now().UnixNano())
	_, err := db.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	return name
}

func item(pk string, n int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "n": &types.AttributeValueMemberN{Value: strconv.Itoa(n)}}
}

// A transaction with one failing condition is cancelled with a typed error
// whose reasons say which action failed and carry its old item.
func TestDynamoDBTransactionCancellationReasons(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := clients(t)
	table := newTable(t, db)
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("taken", 7)}); err != nil {
		t.Fatal(err)
	}
	notExists := aws.String("attribute_not_exists(PK)")
	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &table, Item: item("fresh", 1), ConditionExpression: notExists}},
		{Put: &types.Put{TableName: &table, Item: item("taken", 2), ConditionExpression: notExists,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("want TransactionCanceledException, got %T %v", err, err)
	}
	if len(tce.CancellationReasons) != 2 {
		t.Fatalf("want 2 reasons, got %d", len(tce.CancellationReasons))
	}
	if c := aws.ToString(tce.CancellationReasons[0].Code); c != "None" {
		t.Errorf("reason[0] = %q, want None", c)
	}
	if c := aws.ToString(tce.CancellationReasons[1].Code); c != "ConditionalCheckFailed" {
		t.Errorf("reason[1] = %q, want ConditionalCheckFailed", c)
	}
	var old struct{ N int }
	if err := attributevalue.UnmarshalMap(tce.CancellationReasons[1].Item, &old); err != nil || old.N != 7 {
		t.Errorf("reason[1] old item n = %d (%v), want 7", old.N, err)
	}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "fresh"}}})
	if err != nil || got.Item != nil {
		t.Errorf("cancelled transaction wrote its first action: %v %v", got.Item, err)
	}
}

// A failed conditional put carries the current item (ALL_OLD).
func TestDynamoDBConditionFailureCarriesOldItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := clients(t)
	table := newTable(t, db)
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("k", 42)}); err != nil {
		t.Fatal(err)
	}
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &table, Item: item("k", 1),
		ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("want ConditionalCheckFailedException, got %T %v", err, err)
	}
	n, ok := ccf.Item["n"].(*types.AttributeValueMemberN)
	if !ok || n.Value != "42" {
		t.Fatalf("old item = %v, want n=42", ccf.Item)
	}
}

// A message that is received and never deleted moves to the DLQ after
// exactly maxReceiveCount (3) receives.
func TestSQSDeadLetterAfterThreeReceives(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, q := clients(t)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	dlq, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("smoke-dlq-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	dlqArn := attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	main, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("smoke-main-" + suffix), Attributes: map[string]string{
		"VisibilityTimeout": "1",
		"RedrivePolicy":     fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"3"}`, dlqArn),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: main.QueueUrl, MessageBody: aws.String("hello")}); err != nil {
		t.Fatal(err)
	}
	receives := 0
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: main.QueueUrl, WaitTimeSeconds: 2, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"ApproximateReceiveCount"},
			// local-aws-sqs reads only the deprecated field.
			AttributeNames: []sqstypes.QueueAttributeName{"ApproximateReceiveCount"}}) //nolint:staticcheck // SA1019: see above
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			if receives >= 3 {
				break
			}
			continue
		}
		receives++
		if rc := out.Messages[0].Attributes["ApproximateReceiveCount"]; rc != strconv.Itoa(receives) {
			t.Errorf("receive %d: ApproximateReceiveCount = %s", receives, rc)
		}
	}
	if receives != 3 {
		t.Fatalf("message received %d times from the main queue, want exactly 3", receives)
	}
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: dlq.QueueUrl, WaitTimeSeconds: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "hello" {
		t.Fatalf("DLQ holds %d messages, want the one message", len(out.Messages))
	}
}

func TestPostgresRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, standin.DatabaseURLFromEnv())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var got string
	if err := conn.QueryRow(ctx, "select $1::text || '-' || 'pacer'", "hello").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "hello-pacer" {
		t.Fatalf("got %q", got)
	}
}

// A stand-in that is not installed fails with a message saying how to fix it.
func TestMissingInstallIsAClearError(t *testing.T) {
	t.Parallel()
	_, err := standin.Start(context.Background(), standin.Config{Dir: t.TempDir(), DynamoDB: true})
	if !errors.Is(err, standin.ErrNotInstalled) {
		t.Fatalf("want ErrNotInstalled, got %v", err)
	}
	if want := "make deps"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not mention %q", err, want)
	}
}
