package ddb

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Expr is an update's expressions rendered by the caller, for a hot path
// where building them with the expression package costs more than the
// call: about 220 allocations for a status transition's condition and
// update, against none to fill in a rendered one. Render them with an
// ExprWriter, the way expression.Builder renders them, and hold the
// rendering to the builder's in a test (TestTransitionExprMatchesTheBuilder
// in modules/asyncevent/dynamostore is the model). Everywhere else use
// Update: it checks attribute names against the entity's indexes, which
// an Expr does not.
type Expr struct {
	Condition string // "" for none
	Update    string
	Names     map[string]string
	Values    map[string]types.AttributeValue
}

// UpdateExpr returns an update of e's item k with x's expressions, as an
// operation for Run or DB.Transact. It refuses a tenant-scoped table (its
// tenant condition cannot join a rendered one: use Update there) and an
// empty update.
func (e *Entity[T]) UpdateExpr(k Key, x Expr) *Op {
	o := &Op{table: e.table, kind: opUpdate, label: "Update " + e.name, key: k}
	switch {
	case e.table.tenantAttr != "":
		o.err = fmt.Errorf("%w: %s: a rendered expression on a tenant-scoped table", ErrInvalid, o.label)
	case x.Update == "":
		o.err = fmt.Errorf("%w: %s: update sets nothing", ErrInvalid, o.label)
	}
	o.raw = &exprs{update: aws.String(x.Update), names: x.Names, values: x.Values}
	if x.Condition != "" {
		o.raw.cond = aws.String(x.Condition)
	}
	return o
}

// ExprWriter assigns placeholders as expression.Builder does: each new
// attribute name the next #n (a name used again keeps its own), each
// value the next :n.
type ExprWriter struct {
	names  map[string]string // attribute name → placeholder
	expr   Expr
	values int
}

// Name returns name's placeholder.
func (w *ExprWriter) Name(name string) string {
	if p, ok := w.names[name]; ok {
		return p
	}
	if w.names == nil {
		w.names, w.expr.Names = map[string]string{}, map[string]string{}
	}
	p := "#" + strconv.Itoa(len(w.names))
	w.names[name], w.expr.Names[p] = p, name
	return p
}

// Value returns a new placeholder for v.
func (w *ExprWriter) Value(v types.AttributeValue) string {
	if w.expr.Values == nil {
		w.expr.Values = map[string]types.AttributeValue{}
	}
	p := ":" + strconv.Itoa(w.values)
	w.values++
	w.expr.Values[p] = v
	return p
}

// String is Value of a String attribute value.
func (w *ExprWriter) String(s string) string { return w.Value(&types.AttributeValueMemberS{Value: s}) }

// Int is Value of a Number attribute value.
func (w *ExprWriter) Int(n int64) string {
	return w.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)})
}

// Expr returns the expressions written, with cond and update.
func (w *ExprWriter) Expr(cond, update string) Expr {
	x := w.expr
	x.Condition, x.Update = cond, update
	return x
}
