package ddb

import (
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// A Create's condition is rendered without the expression builder
// (createExprs); it must be what the builder renders.
func TestCreateExprsMatchTheBuilder(t *testing.T) {
	e, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("PK"))).Build()
	if err != nil {
		t.Fatal(err)
	}
	got := createExprs("PK")
	if aws.ToString(got.cond) != aws.ToString(e.Condition()) || !maps.Equal(got.names, e.Names()) || got.values != nil || e.Values() != nil || got.update != nil {
		t.Errorf("createExprs(PK) = %q %v, the builder renders %q %v", aws.ToString(got.cond), got.names, aws.ToString(e.Condition()), e.Names())
	}
	if createExprs("PK") != got {
		t.Error("createExprs renders again for the same key attribute")
	}
}
