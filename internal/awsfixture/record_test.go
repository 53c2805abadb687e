package awsfixture_test

import (
	"testing"

	"github.com/pacerhq/pacer/internal/awsfixture"
)

// TestShapeTellsWritesApart: two single-item writes differing only in
// values have one shape; a different update, condition, ReturnValues or
// answer on a failed condition (of a write or a transaction's item) is
// another.
func TestShapeTellsWritesApart(t *testing.T) {
	update := func(id, v string) string {
		return `{"Key":{"PK":{"S":"A#` + id + `"}},"ConditionExpression":"#0 = :0","UpdateExpression":"SET #1 = :1\n","ReturnValues":"ALL_NEW",` +
			`"ReturnValuesOnConditionCheckFailure":"ALL_OLD","ExpressionAttributeNames":{"#0":"a","#1":"b"},"ExpressionAttributeValues":{":0":{"N":"` + v + `"},":1":{"N":"2"}}}`
	}
	shape := func(body string) string {
		return awsfixture.Call{Op: "DynamoDB.UpdateItem", Body: []byte(body)}.Shape()
	}
	base := shape(update("1", "1"))
	if got := shape(update("2", "9")); got != base {
		t.Errorf("values changed the shape:\n%s\n%s", base, got)
	}
	for _, body := range []string{
		`{"Key":{"PK":{"S":"A#1"}},"ConditionExpression":"#0 = :0","UpdateExpression":"SET #1 = :2\n","ReturnValues":"ALL_NEW","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}`,
		`{"Key":{"PK":{"S":"A#1"}},"ConditionExpression":"#0 < :0","UpdateExpression":"SET #1 = :1\n","ReturnValues":"ALL_NEW","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}`,
		`{"Key":{"PK":{"S":"A#1"}},"ConditionExpression":"#0 = :0","UpdateExpression":"SET #1 = :1\n","ReturnValuesOnConditionCheckFailure":"ALL_OLD"}`,
		`{"Key":{"PK":{"S":"A#1"}},"ConditionExpression":"#0 = :0","UpdateExpression":"SET #1 = :1\n","ReturnValues":"ALL_NEW"}`,
	} {
		if got := shape(body); got == base {
			t.Errorf("%s has the shape of\n%s", body, base)
		}
	}
	tx := func(onFailure string) string {
		return awsfixture.Call{Op: "DynamoDB.TransactWriteItems", Body: []byte(`{"TransactItems":[{"Update":{"Key":{"PK":{"S":"A#1"}},` +
			`"UpdateExpression":"SET #0 = :0\n","ExpressionAttributeNames":{"#0":"a"}` + onFailure + `}}]}`)}.Shape()
	}
	if tx("") == tx(`,"ReturnValuesOnConditionCheckFailure":"ALL_OLD"`) {
		t.Errorf("a transaction item's answer on failure is not in its shape: %s", tx(""))
	}
}
