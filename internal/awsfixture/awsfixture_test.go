package awsfixture_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pacerhq/pacer/internal/awsfixture"
	"github.com/pacerhq/pacer/sdk/awsclient"
)

var ctx = context.Background()

// TestRealClientsAcceptTheAnswers runs the real clients against the
// fixture: a GetItem decodes the item it was told to answer, a
// conditional failure arrives as the SDK's typed error, and SQS sends pass
// the client's MD5 check (a wrong digest would fail them).
func TestRealClientsAcceptTheAnswers(t *testing.T) {
	f := awsfixture.New()
	defer f.Close()
	db := awsclient.DynamoDB(f.Config())
	q := awsclient.SQS(f.Config())

	f.Handle("DynamoDB.GetItem", func(body []byte) any {
		var in struct{ Key map[string]map[string]string }
		if err := json.Unmarshal(body, &in); err != nil {
			t.Errorf("GetItem body: %v", err)
		}
		return map[string]any{"Item": map[string]any{"PK": map[string]string{"S": in.Key["PK"]["S"]}, "n": map[string]string{"N": "7"}}}
	})
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if pk, ok := out.Item["PK"].(*types.AttributeValueMemberS); !ok || pk.Value != "A#1" {
		t.Errorf("GetItem decoded %v, want PK A#1", out.Item)
	}

	f.Handle("DynamoDB.PutItem", func([]byte) any {
		return &awsfixture.Error{Code: "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException", Message: "The conditional request failed"}
	})
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A#1"}}})
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Errorf("PutItem answered a conditional failure: got %v, want *types.ConditionalCheckFailedException", err)
	}

	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(f.URL() + "/q"), MessageBody: aws.String(`{"requestId":"r"}`)}); err != nil {
		t.Errorf("SendMessage: %v", err)
	}
	b, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(f.URL() + "/q"), Entries: []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("x")}, {Id: aws.String("b"), MessageBody: aws.String("y")}}})
	if err != nil || len(b.Successful) != 2 {
		t.Errorf("SendMessageBatch: %v, %d successful, want 2", err, len(b.Successful))
	}
	if got := f.Calls("SQS.SendMessage"); got != 1 {
		t.Errorf("Calls(SQS.SendMessage) = %d, want 1", got)
	}
	if got := f.Total(); got != 4 {
		t.Errorf("Total() = %d, want 4 (GetItem, PutItem once: a conditional failure is not retried, SendMessage, SendMessageBatch)", got)
	}
}

// BenchmarkGetItem is the floor every Pacer/bare pair stands on: one
// aws-sdk-go-v2 GetItem through the fixture, client and fixture together.
func BenchmarkGetItem(b *testing.B) {
	f := awsfixture.New()
	defer f.Close()
	item := json.RawMessage(`{"Item":{"PK":{"S":"REQ#01"},"SK":{"S":"META"},"status":{"S":"QUEUED"}}}`)
	f.Handle("DynamoDB.GetItem", func([]byte) any { return item })
	db := awsclient.DynamoDB(f.Config())
	in := &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "REQ#01"}, "SK": &types.AttributeValueMemberS{Value: "META"}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.GetItem(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

// ItemJSON writes what the real client decodes back to the same item.
func TestItemJSONRoundTrips(t *testing.T) {
	item := map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "a"}, "n": &types.AttributeValueMemberN{Value: "7"},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"b": &types.AttributeValueMemberBOOL{Value: true}}},
	}
	f := awsfixture.New()
	defer f.Close()
	f.Handle("DynamoDB.GetItem", func([]byte) any {
		return json.RawMessage(`{"Item":` + string(awsfixture.ItemJSON(item)) + `}`)
	})
	out, err := awsclient.DynamoDB(f.Config()).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Item, item) {
		t.Errorf("decoded %#v, want %#v", out.Item, item)
	}
}

// Shape tells calls apart by what they write, not by its values: a
// PutItem's item attributes and condition, a BatchWriteItem's puts and
// deletes by their attributes, a BatchGetItem's keys.
func TestShapeNamesTheWrites(t *testing.T) {
	f := awsfixture.New()
	defer f.Close()
	r := f.Record("DynamoDB.PutItem", "DynamoDB.BatchWriteItem", "DynamoDB.BatchGetItem")
	db := awsclient.DynamoDB(f.Config())
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	put := func(pk string, extra ...string) map[string]types.AttributeValue {
		it := map[string]types.AttributeValue{"PK": s(pk), "SK": s("x")}
		for _, a := range extra {
			it[a] = s("v")
		}
		return it
	}
	for _, pk := range []string{"A#1", "A#2"} { // alike but for the values
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: put(pk, "b"), ConditionExpression: aws.String("attribute_not_exists (#0)"),
			ExpressionAttributeNames: map[string]string{"#0": "PK"}, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: put("A#3")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"t": {
		{PutRequest: &types.PutRequest{Item: put("A#1", "b")}}, {PutRequest: &types.PutRequest{Item: put("A#2", "b")}},
		{PutRequest: &types.PutRequest{Item: put("A#3")}}, {DeleteRequest: &types.DeleteRequest{Key: put("A#4")}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: []map[string]types.AttributeValue{put("A#1"), put("A#2")}}}}); err != nil {
		t.Fatal(err)
	}
	got := r.Shapes()
	want := []string{
		"DynamoDB.PutItem\n  write item [PK SK b] cond \"attribute_not_exists (#0)\" update \"\" names map[#0:PK] returns \"\" on failure \"ALL_OLD\"",
		"DynamoDB.PutItem\n  write item [PK SK b] cond \"attribute_not_exists (#0)\" update \"\" names map[#0:PK] returns \"\" on failure \"ALL_OLD\"",
		"DynamoDB.PutItem\n  write item [PK SK] cond \"\" update \"\" names map[] returns \"\" on failure \"\"",
		"DynamoDB.BatchWriteItem\n  batch write t: 4 requests\n    1 x delete [PK SK]\n    2 x put [PK SK b]\n    1 x put [PK SK]",
		"DynamoDB.BatchGetItem\n  batch t: 2 keys of [PK SK]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("shapes:\n%q\nwant\n%q", got, want)
	}
}

// An SDK retry of a call already answered with success (the client lost
// the answer) gets the same answer again without reaching the Reply or
// the counts, so a recording shows each call once; a retry after an
// error answer is a call of its own.
func TestRetryIsReplayed(t *testing.T) {
	f := awsfixture.New()
	defer f.Close()
	var replies atomic.Int32
	f.Handle("DynamoDB.GetItem", func([]byte) any {
		n := replies.Add(1)
		if n == 2 {
			return &awsfixture.Error{Status: 500, Code: "InternalServerError"}
		}
		return json.RawMessage(fmt.Sprintf(`{"Item":{"n":{"N":"%d"}}}`, n))
	})
	call := func(body, attempt string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, f.URL(), strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.GetItem")
		req.Header.Set("Amz-Sdk-Request", attempt)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, first := call(`{"Key":1}`, "attempt=1; max=3")
	if code != 200 || first != `{"Item":{"n":{"N":"1"}}}` {
		t.Fatalf("first answer %d %s", code, first)
	}
	if code, again := call(`{"Key":1}`, "attempt=2; max=3"); code != 200 || again != first {
		t.Errorf("the retry got %d %s, want the first answer %s", code, again, first)
	}
	if replies.Load() != 1 || f.Calls("DynamoDB.GetItem") != 1 || f.Retries() != 1 {
		t.Errorf("after a retry: %d replies, %d calls, %d retries; want 1, 1, 1", replies.Load(), f.Calls("DynamoDB.GetItem"), f.Retries())
	}
	// Another body is another call, even marked as a retry; an error
	// answer's retry reaches the Reply again.
	if code, _ := call(`{"Key":2}`, "attempt=1; max=3"); code != 500 {
		t.Fatalf("second call answered %d, want the 500 the Reply gave", code)
	}
	if code, b := call(`{"Key":2}`, "attempt=2; max=3"); code != 200 || b != `{"Item":{"n":{"N":"3"}}}` {
		t.Errorf("the retry of an error answer got %d %s, want the Reply's third answer", code, b)
	}
	if replies.Load() != 3 || f.Calls("DynamoDB.GetItem") != 3 || f.Retries() != 1 {
		t.Errorf("%d replies, %d calls, %d retries; want 3, 3, 1", replies.Load(), f.Calls("DynamoDB.GetItem"), f.Retries())
	}
}
