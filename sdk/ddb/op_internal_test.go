package ddb

import (
	"errors"
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

// A Create's condition is built only when If adds to it: alone, on a
// table or a tenant's view, it is createExprs; with If, attribute_not_exists
// on the key ANDed with the condition added, as the builder renders it.
func TestCreateBuildsItsConditionOnlyForIf(t *testing.T) {
	type item struct{ ID string }
	key := func(*item) Key { return Key{PK: "P", SK: "S"} }
	table := New(nil, Config{}).Table("t", &Schema{PK: "PK", SK: "SK"})
	for name, e := range map[string]*Entity[item]{"table": NewEntity(table, "ITEM", key), "tenant": NewEntity(table.Scope("orgId", "o1"), "ITEM", key)} {
		if got, err := e.Create(&item{ID: "1"}).expr(); err != nil || got != createExprs("PK") {
			t.Errorf("%s: a Create alone renders %+v, %v; want createExprs", name, got, err)
		}
	}
	added := expression.Name("n").LessThan(expression.Value(3))
	want, err := expression.NewBuilder().WithCondition(expression.AttributeNotExists(expression.Name("PK")).And(added)).Build()
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewEntity(table, "ITEM", key).Create(&item{ID: "1"}).If(added).expr()
	if err != nil || aws.ToString(got.cond) != aws.ToString(want.Condition()) || !maps.Equal(got.names, want.Names()) {
		t.Errorf("Create.If renders %q %v, %v; the builder %q %v", aws.ToString(got.cond), got.names, err, aws.ToString(want.Condition()), want.Names())
	}
}

// UpdateExpr refuses what a rendered expression cannot do safely, before
// any call: a tenant-scoped table (its tenant condition cannot join), an
// update that sets nothing, and a condition added with If.
func TestUpdateExprRefuses(t *testing.T) {
	type item struct{ ID string }
	key := func(*item) Key { return Key{PK: "P", SK: "S"} }
	db := New(nil, Config{}) // no call is made: each op fails before one
	table := db.Table("t", &Schema{PK: "PK", SK: "SK"})
	x := Expr{Update: "SET #0 = :0", Names: map[string]string{"#0": "a"}}
	for name, op := range map[string]*Op{
		"tenant-scoped": NewEntity(table.Scope("orgId", "o1"), "ITEM", key).UpdateExpr(Key{PK: "P", SK: "S"}, x),
		"empty update":  NewEntity(table, "ITEM", key).UpdateExpr(Key{PK: "P", SK: "S"}, Expr{}),
		"If":            NewEntity(table, "ITEM", key).UpdateExpr(Key{PK: "P", SK: "S"}, x).If(expression.AttributeExists(expression.Name("PK"))),
	} {
		if _, err := op.expr(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	got, err := NewEntity(table, "ITEM", key).UpdateExpr(Key{PK: "P", SK: "S"}, x).expr()
	if err != nil || aws.ToString(got.update) != x.Update || got.cond != nil {
		t.Errorf("a valid rendered update: %+v, %v", got, err)
	}
}
