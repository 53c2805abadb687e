package ddb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type opKind int

const (
	opPut opKind = iota
	opUpdate
	opDelete
	opCheck
)

// Op is one write: a put, update, delete or (in transactions only) condition
// check. Run it alone with Run, or several at once with DB.Transact.
// Conditions added with If are ANDed; on failure the error carries the
// current item.
type Op struct {
	table *Table
	kind  opKind
	label string
	key   Key
	item  Item
	cond  *expression.ConditionBuilder
	upd   *Update
	err   error
	// create says the operation is a Create whose only condition is
	// attribute_not_exists on the partition key: rendered without the
	// builder (createExprs), and built into cond only when If adds to it.
	create bool
	// raw holds expressions the caller rendered (Entity.UpdateExpr).
	raw *exprs
}

// exprs are an operation's expressions as a request takes them.
type exprs struct {
	cond, update *string
	names        map[string]string
	values       map[string]types.AttributeValue
}

// createConds holds, per partition-key attribute, a Create's condition
// rendered once (attribute_not_exists on the key): the expression
// builder spends about 40 allocations on it per call, and a
// participation writes four Creates. Requests only read it.
var createConds sync.Map // pk attribute → *exprs

func createExprs(pk string) *exprs {
	if e, ok := createConds.Load(pk); ok {
		return e.(*exprs)
	}
	e, _ := createConds.LoadOrStore(pk, &exprs{cond: aws.String("attribute_not_exists (#0)"), names: map[string]string{"#0": pk}})
	return e.(*exprs)
}

// Label names the operation in errors and TxError reasons (e.g. "lock").
func (o *Op) Label(l string) *Op { o.label = l; return o }

// Key returns the key the operation writes.
func (o *Op) Key() Key { return o.key }

// If adds a condition (ANDed with any others).
func (o *Op) If(c expression.ConditionBuilder) *Op {
	if o.raw != nil {
		o.err = fmt.Errorf("%w: %s: If on a rendered expression (Entity.UpdateExpr): render the condition with it", ErrInvalid, o.label)
		return o
	}
	if o.create {
		o.cond, o.create = notExists(o.table.schema.PK), false
	}
	o.cond = and(o.cond, c)
	return o
}

func and(a *expression.ConditionBuilder, b expression.ConditionBuilder) *expression.ConditionBuilder {
	if a == nil {
		return &b
	}
	c := a.And(b)
	return &c
}

func notExists(pk string) *expression.ConditionBuilder {
	c := expression.AttributeNotExists(expression.Name(pk))
	return &c
}

// putOp is a put of it, a Create with create (see Op.create).
func (t *Table) putOp(label string, it Item, k Key, create bool, err error) *Op {
	o := &Op{table: t, kind: opPut, label: label, key: k, item: it, create: create, err: err}
	if tc := t.tenantCond(); tc != nil && !create {
		// A tenant may overwrite only its own items.
		c := expression.AttributeNotExists(expression.Name(t.schema.PK)).Or(*tc)
		o.cond = &c
	}
	return o
}

func (t *Table) deleteOp(label string, k Key) *Op {
	o := &Op{table: t, kind: opDelete, label: label, key: k}
	if tc := t.tenantCond(); tc != nil {
		c := expression.AttributeNotExists(expression.Name(t.schema.PK)).Or(*tc)
		o.cond = &c
	}
	return o
}

func (t *Table) checkOp(label string, k Key) *Op {
	o := &Op{table: t, kind: opCheck, label: label, key: k}
	o.cond = t.tenantCond()
	return o
}

// PutItem returns an unconditional put of a raw item (no entity checks).
func (t *Table) PutItem(it Item) *Op {
	return t.putOp("Put", it, t.keyOf(it), false, nil)
}

// DeleteItem returns a delete of the item with key k.
func (t *Table) DeleteItem(k Key) *Op { return t.deleteOp("Delete", k) }

// expr builds the operation's expressions.
func (o *Op) expr() (*exprs, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.raw != nil {
		return o.raw, nil
	}
	if o.create && o.upd == nil {
		return createExprs(o.table.schema.PK), nil
	}
	var u *expression.UpdateBuilder
	if o.upd != nil {
		if o.upd.err != nil {
			return nil, o.upd.err
		}
		u = o.upd.ub
	}
	if o.cond == nil && u == nil {
		return nil, nil
	}
	b := expression.NewBuilder()
	if o.cond != nil {
		b = b.WithCondition(*o.cond)
	}
	if u != nil {
		b = b.WithUpdate(*u)
	}
	e, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, o.label, err)
	}
	return &exprs{cond: e.Condition(), update: e.Update(), names: e.Names(), values: e.Values()}, nil
}

// Run executes the operation on its own.
func (o *Op) Run(ctx context.Context) error {
	_, err := o.run(ctx, types.ReturnValueNone)
	return err
}

// run executes the operation, retrying it while DynamoDB refuses it with
// TransactionConflict (the item is in a transaction in flight; nothing was
// applied, and the AWS retryer does not retry this error), as DB.Transact
// retries conflicted transactions: Config.TxConflictRetries times with the
// batch backoff.
func (o *Op) run(ctx context.Context, rv types.ReturnValue) (Item, error) {
	var it Item
	err := o.table.db.retry(ctx, func(err error) bool {
		var tc *types.TransactionConflictException
		return errors.As(err, &tc)
	}, func() error {
		var err error
		it, err = o.runOnce(ctx, rv)
		return err
	})
	return it, err
}

func (o *Op) runOnce(ctx context.Context, rv types.ReturnValue) (Item, error) {
	e, err := o.expr()
	if err != nil {
		return nil, err
	}
	t := o.table
	name := aws.String(t.name)
	var cond, update *string
	var names map[string]string
	var values map[string]types.AttributeValue
	if e != nil {
		cond, update, names, values = e.cond, e.update, e.names, e.values
	}
	start := time.Now()
	var cc *types.ConsumedCapacity
	var opName string
	var attrs Item
	switch o.kind {
	case opPut:
		opName = "PutItem"
		var out *dynamodb.PutItemOutput
		out, err = t.db.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: name, Item: o.item, ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			ReturnConsumedCapacity:              t.db.consumed(),
		})
		if out != nil {
			cc = out.ConsumedCapacity
		}
	case opUpdate:
		opName = "UpdateItem"
		var out *dynamodb.UpdateItemOutput
		out, err = t.db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: name, Key: t.key(o.key), ConditionExpression: cond, UpdateExpression: update,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValues:                        rv,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			ReturnConsumedCapacity:              t.db.consumed(),
		})
		if out != nil {
			cc, attrs = out.ConsumedCapacity, out.Attributes
		}
	case opDelete:
		opName = "DeleteItem"
		var out *dynamodb.DeleteItemOutput
		out, err = t.db.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: name, Key: t.key(o.key), ConditionExpression: cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValues:                        rv,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			ReturnConsumedCapacity:              t.db.consumed(),
		})
		if out != nil {
			cc, attrs = out.ConsumedCapacity, out.Attributes
		}
	case opCheck:
		return nil, fmt.Errorf("%w: %s: a condition check runs only inside a transaction", ErrInvalid, o.label)
	}
	t.db.observe(ctx, opName, t.name, "", start, one(cc), err)
	if err != nil {
		return nil, wrapErr(o.label, o.key, err)
	}
	return attrs, nil
}

// Update is an UpdateItem under construction. Its methods chain; call Run,
// RunNew, or Op (to use it in a transaction).
type Update struct {
	table *Table
	key   Key
	label string
	ub    *expression.UpdateBuilder
	cond  *expression.ConditionBuilder
	check func(attr string) error
	err   error
}

func (u *Update) set(f func(expression.UpdateBuilder) expression.UpdateBuilder, attr string) *Update {
	if u.check != nil && u.err == nil {
		u.err = u.check(attr)
	}
	if attr == u.table.schema.PK || attr == u.table.schema.SK || (u.table.tenantAttr != "" && attr == u.table.tenantAttr) {
		u.err = fmt.Errorf("%w: %s: cannot update key or tenant attribute %s", ErrInvalid, u.label, attr)
	}
	var b expression.UpdateBuilder
	if u.ub != nil {
		b = *u.ub
	}
	b = f(b)
	u.ub = &b
	return u
}

// Set sets attribute name to v (encoded with attributevalue).
func (u *Update) Set(name string, v any) *Update {
	return u.set(func(b expression.UpdateBuilder) expression.UpdateBuilder {
		return b.Set(expression.Name(name), expression.Value(v))
	}, name)
}

// SetIfNotExists sets name to v unless it already has a value.
func (u *Update) SetIfNotExists(name string, v any) *Update {
	return u.set(func(b expression.UpdateBuilder) expression.UpdateBuilder {
		return b.Set(expression.Name(name), expression.IfNotExists(expression.Name(name), expression.Value(v)))
	}, name)
}

// Add atomically adds delta to a Number attribute (creating it at delta).
func (u *Update) Add(name string, delta int64) *Update {
	return u.set(func(b expression.UpdateBuilder) expression.UpdateBuilder {
		return b.Add(expression.Name(name), expression.Value(delta))
	}, name)
}

// Remove removes attribute name.
func (u *Update) Remove(name string) *Update {
	return u.set(func(b expression.UpdateBuilder) expression.UpdateBuilder {
		return b.Remove(expression.Name(name))
	}, name)
}

// If adds a condition (ANDed with any others).
func (u *Update) If(c expression.ConditionBuilder) *Update {
	u.cond = and(u.cond, c)
	return u
}

// MustExist adds the condition that the item exists.
func (u *Update) MustExist() *Update {
	return u.If(expression.AttributeExists(expression.Name(u.table.schema.PK)))
}

// Bounded adds delta to a counter only if the result stays within
// [min, max]: the guarded atomic counter. Pass nil for an open bound. With
// Bounded("capacityRemaining", -1, &zero, nil), exactly capacity callers
// succeed however many race.
func (u *Update) Bounded(name string, delta int64, min, max *int64) *Update {
	u.Add(name, delta)
	n := expression.Name(name)
	if min != nil {
		u.If(n.GreaterThanEqual(expression.Value(*min - delta)))
	}
	if max != nil {
		u.If(n.LessThanEqual(expression.Value(*max - delta)))
	}
	return u
}

// Label names the operation in errors and TxError reasons.
func (u *Update) Label(l string) *Update { u.label = l; return u }

// Op returns the update as an operation, for DB.Transact.
func (u *Update) Op() *Op {
	cond := u.cond
	if tc := u.table.tenantCond(); tc != nil {
		cond = and(cond, *tc)
	}
	if u.ub == nil && u.err == nil {
		u.err = fmt.Errorf("%w: %s: update sets nothing", ErrInvalid, u.label)
	}
	return &Op{table: u.table, kind: opUpdate, label: u.label, key: u.key, cond: cond, upd: u}
}

// Run executes the update.
func (u *Update) Run(ctx context.Context) error { return u.Op().Run(ctx) }

// RunNew executes the update and decodes the item as it is afterwards into
// out. As with json.Unmarshal, fields of out whose attributes the item
// lacks keep their values: pass a zero value.
func (u *Update) RunNew(ctx context.Context, out any) error {
	it, err := u.Op().run(ctx, types.ReturnValueAllNew)
	if err != nil {
		return err
	}
	return attributevalue.UnmarshalMap(it, out)
}
