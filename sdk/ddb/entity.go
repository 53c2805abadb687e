package ddb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Entity binds a Go type to a table: its entity type name (written to the
// schema's TypeAttribute), its key function, and the GSIs it may carry.
//
// T is encoded and decoded with attributevalue (dynamodbav tags). T need not
// hold the table's PK/SK: Marshal fills them from the key function. Any
// index key attribute that T writes must belong to an index the entity is
// allowed, or Marshal returns ErrIndexNotAllowed: the rule "GSI attributes
// only on Request items" is enforced by code, not by review.
type Entity[T any] struct {
	table   *Table
	name    string
	key     func(*T) Key
	allowed map[string]bool // attribute names of allowed index keys
	denied  map[string]string
	labels  opLabels
}

// opLabels are an entity's operations' default labels ("Create
// REQUEST"), spelled once: a hot path makes several operations a call.
type opLabels struct{ put, create, update, del, check string }

// NewEntity defines an entity on t. indexes names the GSIs its items may
// carry; every other GSI's key attributes are forbidden on it.
func NewEntity[T any](t *Table, name string, key func(*T) Key, indexes ...string) *Entity[T] {
	e := &Entity[T]{table: t, name: name, key: key, allowed: map[string]bool{}, denied: map[string]string{},
		labels: opLabels{put: "Put " + name, create: "Create " + name, update: "Update " + name, del: "Delete " + name, check: "Check " + name}}
	for _, n := range indexes {
		ix, ok := t.schema.Index(n)
		if !ok {
			panic(fmt.Sprintf("ddb: entity %s: no index %q in schema", name, n))
		}
		e.allowed[ix.PK], e.allowed[ix.SK] = true, true
	}
	for _, ix := range t.schema.Indexes {
		for _, a := range []string{ix.PK, ix.SK} {
			if a != "" && !e.allowed[a] && a != t.schema.PK && a != t.schema.SK {
				e.denied[a] = ix.Name
			}
		}
	}
	return e
}

// Name returns the entity type name.
func (e *Entity[T]) Name() string { return e.name }

// Table returns the table (or tenant view) the entity writes to.
func (e *Entity[T]) Table() *Table { return e.table }

// Key returns v's primary key.
func (e *Entity[T]) Key(v *T) Key { return e.key(v) }

// In returns the same entity bound to another view of its table, e.g. a
// tenant's Scope.
func (e *Entity[T]) In(t *Table) *Entity[T] {
	c := *e
	c.table = t
	return &c
}

// encoder and decoder hold only options, so one of each serves every call
// (attributevalue.MarshalMap and UnmarshalMap allocate a new one per call).
var (
	encoder = attributevalue.NewEncoder()
	decoder = attributevalue.NewDecoder()
)

// Marshal encodes v as a full item: its attributes, its primary key and its
// entity type.
func (e *Entity[T]) Marshal(v *T) (Item, error) {
	av, err := encoder.Encode(v)
	if err != nil {
		return nil, fmt.Errorf("ddb: marshal %s: %w", e.name, err)
	}
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("ddb: marshal %s: %T does not encode as a map", e.name, v)
	}
	it := m.Value
	if err := e.checkAttrs(it); err != nil {
		return nil, err
	}
	k := e.key(v)
	s := e.table.schema
	it[s.PK] = &types.AttributeValueMemberS{Value: k.PK}
	if s.SK != "" {
		it[s.SK] = &types.AttributeValueMemberS{Value: k.SK}
	}
	it[s.typeAttr()] = &types.AttributeValueMemberS{Value: e.name}
	if t := e.table; t.tenantAttr != "" {
		if cur, ok := it[t.tenantAttr]; ok && str(cur) != "" && str(cur) != t.tenant {
			return nil, fmt.Errorf("%w: %s %s names tenant %q, view is %q", ErrTenant, e.name, k.PK, str(cur), t.tenant)
		}
		it[t.tenantAttr] = &types.AttributeValueMemberS{Value: t.tenant}
	}
	return it, nil
}

// checkAttrs rejects index key attributes the entity may not carry.
func (e *Entity[T]) checkAttrs(it Item) error {
	for a, ix := range e.denied {
		if _, ok := it[a]; ok {
			return fmt.Errorf("%w: %s may not carry %s (attribute %s)", ErrIndexNotAllowed, e.name, ix, a)
		}
	}
	return nil
}

// checkName rejects one attribute name the entity may not write.
func (e *Entity[T]) checkName(a string) error {
	if ix, ok := e.denied[a]; ok {
		return fmt.Errorf("%w: %s may not carry %s (attribute %s)", ErrIndexNotAllowed, e.name, ix, a)
	}
	return nil
}

// Unmarshal decodes an item into a new T.
func (e *Entity[T]) Unmarshal(it Item) (*T, error) {
	v := new(T)
	if err := decoder.Decode(&types.AttributeValueMemberM{Value: it}, v); err != nil {
		return nil, fmt.Errorf("ddb: unmarshal %s: %w", e.name, err)
	}
	return v, nil
}

// Get reads one item (eventually consistent). Missing is ErrNotFound.
func (e *Entity[T]) Get(ctx context.Context, k Key) (*T, error) {
	it, err := e.table.Get(ctx, k)
	if err != nil {
		return nil, err
	}
	return e.Unmarshal(it)
}

// GetStrong reads one item with a strongly consistent read.
func (e *Entity[T]) GetStrong(ctx context.Context, k Key) (*T, error) {
	it, err := e.table.GetStrong(ctx, k)
	if err != nil {
		return nil, err
	}
	return e.Unmarshal(it)
}

// Put writes v unconditionally (replacing any item with its key).
func (e *Entity[T]) Put(v *T) *Op {
	it, err := e.Marshal(v)
	return e.table.putOp(e.labels.put, it, e.key(v), false, err)
}

// Create writes v only if no item has its key ("put if absent"). If one
// does, the error is a *ConditionError (or a TxReason inside a transaction)
// carrying the existing item.
func (e *Entity[T]) Create(v *T) *Op {
	it, err := e.Marshal(v)
	return e.table.putOp(e.labels.create, it, e.key(v), true, err)
}

// Update starts an update of the item with key k. Writing an index key
// attribute the entity may not carry is ErrIndexNotAllowed.
func (e *Entity[T]) Update(k Key) *Update {
	return &Update{table: e.table, key: k, label: e.labels.update, check: e.checkName}
}

// Delete deletes the item with key k (no error if it is absent).
func (e *Entity[T]) Delete(k Key) *Op {
	return e.table.deleteOp(e.labels.del, k)
}

// Check is a transaction-only condition check on the item with key k.
func (e *Entity[T]) Check(k Key) *Op {
	return e.table.checkOp(e.labels.check, k)
}

// Query starts a query of this entity's items on index ("" for the base
// table) in partition pk.
func (e *Entity[T]) Query(index, pk string) *Query[T] {
	return newQuery(e.table, index, pk, e.Unmarshal)
}

// BatchGet reads items by key in chunks of 100. The result has one entry
// per key, in order; a missing item is nil. With a *BatchError, the items
// that were read are still returned.
func (e *Entity[T]) BatchGet(ctx context.Context, keys []Key) ([]*T, error) {
	items, berr := e.table.BatchGet(ctx, keys)
	if items == nil {
		return nil, berr
	}
	out := make([]*T, len(items))
	for i, it := range items {
		if it == nil {
			continue
		}
		v, err := e.Unmarshal(it)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, berr
}

// BatchPut writes items unconditionally in chunks of 25, retrying
// unprocessed items.
func (e *Entity[T]) BatchPut(ctx context.Context, vs []*T) error {
	items := make([]Item, len(vs))
	for i, v := range vs {
		it, err := e.Marshal(v)
		if err != nil {
			return err
		}
		items[i] = it
	}
	return e.table.BatchWrite(ctx, items, nil)
}
