package iamtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/pacerhq/pacer/sdk/awsclient"
)

// counting is an HTTP client that counts the requests it sends.
type counting struct {
	inner aws.HTTPClient
	n     atomic.Int64
}

func (c *counting) Do(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.inner.Do(r)
}

// stand is one test's resources on the stand-ins, made without the
// enforcer, and a config whose HTTP requests are counted.
type stand struct {
	cfg   aws.Config // not enforced
	sent  *counting  // requests sent through cfg's clients
	db    *dynamodb.Client
	q     *sqs.Client
	table string
	a     ARNs
}

var seq atomic.Int64

// newStand makes a config for the stand-ins; it fails the test, saying
// how to start them, when they are not configured.
func newStand(t *testing.T) *stand {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" || os.Getenv("AWS_ENDPOINT_URL_SQS") == "" {
		t.Fatal("iamtest: the stand-ins' endpoints are not set; TestMain starts them with standin.RunTests (install them with `make deps`)")
	}
	cfg, err := awsclient.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sent := &counting{inner: cfg.HTTPClient}
	cfg.HTTPClient = sent
	return &stand{cfg: cfg, sent: sent, db: awsclient.DynamoDB(cfg), q: awsclient.SQS(cfg), a: testARNs}
}

// name is a unique resource name for t.
func name(t *testing.T) string {
	return fmt.Sprintf("iamtest-%s-%d-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano()%1e9, seq.Add(1))
}

// createTable creates a table (PK, SK) with the index GSI1 (GSI1PK) and,
// with streams, a stream of new images.
func (s *stand) createTable(t *testing.T, streams bool) {
	t.Helper()
	s.table = name(t)
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(n string, k types.KeyType) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(n), KeyType: k}
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(s.table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{str("PK"), str("SK"), str("GSI1PK")},
		KeySchema:            []types.KeySchemaElement{key("PK", types.KeyTypeHash), key("SK", types.KeyTypeRange)},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("GSI1"),
			KeySchema:  []types.KeySchemaElement{key("GSI1PK", types.KeyTypeHash)},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	}
	if streams {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	}
	if _, err := s.db.CreateTable(context.Background(), in); err != nil {
		t.Fatalf("create table: %v", err)
	}
	t.Cleanup(func() {
		if _, err := s.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.table)}); err != nil {
			t.Logf("delete table %s: %v", s.table, err)
		}
	})
}

// createQueue creates a queue (with attrs) and returns its URL and name.
func (s *stand) createQueue(t *testing.T, attrs map[string]string) (url, queue string) {
	t.Helper()
	queue = name(t)
	out, err := s.q.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(queue), Attributes: attrs})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	t.Cleanup(func() {
		if _, err := s.q.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}); err != nil {
			t.Logf("delete queue %s: %v", queue, err)
		}
	})
	return *out.QueueUrl, queue
}

// policy parses statements of Allow action(s) on resource(s).
func policy(t *testing.T, statements ...map[string]any) Policy {
	t.Helper()
	list := make([]any, len(statements))
	for i, s := range statements {
		list[i] = s
	}
	return mustParse(t, map[string]any{"Version": "2012-10-17", "Statement": list})
}

// wantDenied fails t unless err is AWS's AccessDeniedException for action
// on resource, as a smithy.APIError.
func wantDenied(t *testing.T, err error, action, resource string) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDeniedException" {
		t.Fatalf("error %v (%T), want an AccessDeniedException", err, err)
	}
	want := "is not authorized to perform: " + action + " on resource: " + resource + " "
	if !strings.Contains(apiErr.ErrorMessage(), want) || apiErr.ErrorFault() != smithy.FaultClient {
		t.Errorf("message %q (fault %v), want it to contain %q, a client fault", apiErr.ErrorMessage(), apiErr.ErrorFault(), want)
	}
}

func item(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "A"},
		"GSI1PK": &types.AttributeValueMemberS{Value: "g"},
	}
}

// A transaction's Put needs dynamodb:PutItem: refused without it, and not
// sent (nothing is written); done once the policy grants it.
func TestTransactWriteNeedsPutItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStand(t)
	s.createTable(t, false)
	e := New(policy(t, allow([]any{"dynamodb:UpdateItem", "dynamodb:ConditionCheckItem", "dynamodb:TransactWriteItems"}, s.a.Table(s.table))), s.a)
	db := awsclient.DynamoDB(e.Attach(s.cfg))
	tx := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(s.table), Item: item("p")}}}}
	before := s.sent.n.Load()
	_, err := db.TransactWriteItems(ctx, tx)
	wantDenied(t, err, "dynamodb:PutItem", s.a.Table(s.table))
	if n := s.sent.n.Load() - before; n != 0 {
		t.Errorf("the refused call sent %d requests, want none", n)
	}
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: "A"}}
	got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item != nil {
		t.Fatalf("after the refusal GetItem = %v, %v; want no item", got.Item, err)
	}

	e.SetPolicy(policy(t, allow([]any{"dynamodb:PutItem"}, s.a.Table(s.table))))
	if _, err := db.TransactWriteItems(ctx, tx); err != nil {
		t.Fatalf("with dynamodb:PutItem granted: %v", err)
	}
	got, err = s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil || got.Item == nil {
		t.Fatalf("after the transaction GetItem = %v, %v; want the item", got.Item, err)
	}
	want := []Check{
		{Operation: "DynamoDB.TransactWriteItems", Action: "dynamodb:PutItem", Resource: s.a.Table(s.table), Allowed: false},
		{Operation: "DynamoDB.TransactWriteItems", Action: "dynamodb:PutItem", Resource: s.a.Table(s.table), Allowed: true},
	}
	if got := e.Checks(); !slices.Equal(got, want) {
		t.Errorf("checks %v, want %v", got, want)
	}
	if got := e.Denied(); !slices.Equal(got, want[:1]) {
		t.Errorf("denied %v, want %v", got, want[:1])
	}
}

// A Query on an index needs the index's ARN: the table's alone is refused.
func TestQueryOnIndexNeedsIndexARN(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStand(t)
	s.createTable(t, false)
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item("p")}); err != nil {
		t.Fatal(err)
	}
	e := New(policy(t, allow("dynamodb:Query", s.a.Table(s.table))), s.a)
	db := awsclient.DynamoDB(e.Attach(s.cfg))
	q := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :g"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "g"}},
	}
	_, err := db.Query(ctx, q)
	wantDenied(t, err, "dynamodb:Query", s.a.Index(s.table, "GSI1"))
	onTable := &dynamodb.QueryInput{
		TableName: aws.String(s.table), KeyConditionExpression: aws.String("PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "p"}},
	}
	if out, err := db.Query(ctx, onTable); err != nil || out.Count != 1 {
		t.Fatalf("a Query on the table itself: %v (count %v), want the item", err, out)
	}

	e.SetPolicy(policy(t, allow("dynamodb:Query", []any{s.a.Table(s.table), s.a.Table(s.table) + "/index/*"})))
	out, err := db.Query(ctx, q)
	if err != nil || out.Count != 1 {
		t.Fatalf("with index/* granted: %v (%v), want the item", err, out)
	}
}

// SendMessageBatch is authorized as sqs:SendMessage.
func TestSendMessageBatchNeedsSendMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStand(t)
	url, queue := s.createQueue(t, nil)
	e := New(policy(t, allow([]any{"sqs:SendMessageBatch", "sqs:ReceiveMessage"}, s.a.Queue(queue))), s.a)
	q := awsclient.SQS(e.Attach(s.cfg))
	batch := &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("1"), MessageBody: aws.String("one")}, {Id: aws.String("2"), MessageBody: aws.String("two")},
	}}
	before := s.sent.n.Load()
	_, err := q.SendMessageBatch(ctx, batch)
	wantDenied(t, err, "sqs:SendMessage", s.a.Queue(queue))
	if n := s.sent.n.Load() - before; n != 0 {
		t.Errorf("the refused call sent %d requests, want none", n)
	}
	if n := s.receive(t, url, 0); n != 0 {
		t.Errorf("%d messages received after the refusal, want 0", n)
	}

	e.SetPolicy(policy(t, allow("sqs:SendMessage", s.a.Queue(queue))))
	out, err := q.SendMessageBatch(ctx, batch)
	if err != nil || len(out.Successful) != 2 {
		t.Fatalf("with sqs:SendMessage granted: %v (%v)", err, out)
	}
	if n := s.receive(t, url, 2); n != 2 {
		t.Errorf("%d messages received, want 2", n)
	}
}

// receive receives messages from the queue until it has want or, with
// want 0, for one long poll; it returns how many it received.
func (s *stand) receive(t *testing.T, url string, want int) int {
	t.Helper()
	got := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		out, err := s.q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		got += len(out.Messages)
		if want == 0 || got >= want {
			break
		}
	}
	return got
}

// A refused call is one check and no request, however many attempts the
// retryer would make: the refusal is a client fault, and not retried.
func TestRefusalIsNotRetried(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	e := New(Policy{}, s.a)
	cfg := e.Attach(s.cfg)
	db := awsclient.DynamoDB(cfg, func(o *dynamodb.Options) { o.RetryMaxAttempts = 5 })
	before := s.sent.n.Load()
	for i := range 3 {
		_, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String("T")})
		wantDenied(t, err, "dynamodb:DescribeTable", s.a.Table("T"))
		if n := len(e.Checks()); n != i+1 {
			t.Fatalf("after %d calls, %d checks, want %d", i+1, n, i+1)
		}
	}
	if n := s.sent.n.Load() - before; n != 0 {
		t.Errorf("refused calls sent %d requests, want none", n)
	}
	if !IsAccessDenied(fmt.Errorf("wrapped: %w", &smithy.GenericAPIError{Code: AccessDenied})) || IsAccessDenied(errors.New("AccessDeniedException")) {
		t.Error("IsAccessDenied does not tell an AccessDenied API error from another error")
	}
}

// A call of an operation no rule covers is refused, naming it, unsent.
func TestUnknownOperationRefused(t *testing.T) {
	t.Parallel()
	s := newStand(t)
	e := New(policy(t, allow("*", "*")), s.a)
	q := awsclient.SQS(e.Attach(s.cfg))
	before := s.sent.n.Load()
	_, err := q.AddPermission(context.Background(), &sqs.AddPermissionInput{
		QueueUrl: aws.String("http://127.0.0.1:1/000000000000/q"), Label: aws.String("l"),
		AWSAccountIds: []string{"000000000000"}, Actions: []string{"SendMessage"},
	})
	if !errors.Is(err, ErrNoRule) || !strings.Contains(err.Error(), "SQS AddPermission") {
		t.Fatalf("AddPermission: %v, want ErrNoRule naming SQS AddPermission", err)
	}
	if n := s.sent.n.Load() - before; n != 0 {
		t.Errorf("the refused call sent %d requests, want none", n)
	}
	d := e.Denied()
	if len(d) != 1 || d[0].Operation != "SQS.AddPermission" || !strings.Contains(d[0].Error, "no authorization rule") {
		t.Errorf("denied %v, want the one AddPermission check with its error", d)
	}
}
