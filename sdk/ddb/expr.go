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
	o := &Op{table: e.table, kind: opUpdate, label: e.labels.update, key: k}
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
// value the next :n. It keeps them in order and makes Expr's maps once,
// at their size: a transition's dozen names and values would otherwise
// grow two maps each.
type ExprWriter struct {
	names  []string               // names[i] is #i's attribute name
	values []types.AttributeValue // values[i] is :i's value
}

// exprCap is the names and values an ExprWriter makes room for at once:
// a transition's (docs/sdk.md, Rendered expressions).
const exprCap = 16

// namePlaceholders and valuePlaceholders spell the first placeholders
// once.
var namePlaceholders, valuePlaceholders = spell("#"), spell(":")

func spell(prefix string) [2 * exprCap]string {
	var out [2 * exprCap]string
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

// placeholder is the i-th placeholder: spelled[i], or prefix and i.
func placeholder(spelled *[2 * exprCap]string, prefix string, i int) string {
	if i < len(spelled) {
		return spelled[i]
	}
	return prefix + strconv.Itoa(i)
}

// Name returns name's placeholder.
func (w *ExprWriter) Name(name string) string {
	for i, n := range w.names {
		if n == name {
			return placeholder(&namePlaceholders, "#", i)
		}
	}
	if w.names == nil {
		w.names = make([]string, 0, exprCap)
	}
	w.names = append(w.names, name)
	return placeholder(&namePlaceholders, "#", len(w.names)-1)
}

// Value returns a new placeholder for v.
func (w *ExprWriter) Value(v types.AttributeValue) string {
	if w.values == nil {
		w.values = make([]types.AttributeValue, 0, exprCap)
	}
	w.values = append(w.values, v)
	return placeholder(&valuePlaceholders, ":", len(w.values)-1)
}

// String is Value of a String attribute value.
func (w *ExprWriter) String(s string) string { return w.Value(&types.AttributeValueMemberS{Value: s}) }

// Int is Value of a Number attribute value.
func (w *ExprWriter) Int(n int64) string {
	return w.Value(&types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)})
}

// Expr returns the expressions written, with cond and update: Names and
// Values nil when none was written.
func (w *ExprWriter) Expr(cond, update string) Expr {
	x := Expr{Condition: cond, Update: update}
	if len(w.names) > 0 {
		x.Names = make(map[string]string, len(w.names))
		for i, n := range w.names {
			x.Names[placeholder(&namePlaceholders, "#", i)] = n
		}
	}
	if len(w.values) > 0 {
		x.Values = make(map[string]types.AttributeValue, len(w.values))
		for i, v := range w.values {
			x.Values[placeholder(&valuePlaceholders, ":", i)] = v
		}
	}
	return x
}
