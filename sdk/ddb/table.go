package ddb

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is a raw DynamoDB item.
type Item = map[string]types.AttributeValue

// Table is a handle on one table. A Table returned by Scope is a tenant's
// view of it.
type Table struct {
	db     *DB
	name   string
	schema *Schema

	tenantAttr string // attribute holding the tenant id; "" when unscoped
	tenant     string
}

// Name returns the table name.
func (t *Table) Name() string { return t.name }

// Schema returns the table's schema.
func (t *Table) Schema() *Schema { return t.schema }

// DB returns the DB the table belongs to.
func (t *Table) DB() *DB { return t.db }

// Scope returns a view of the table for one tenant, whose id every tenant
// item carries in attr (e.g. "orgId"). Through the view:
//
//   - writes set attr to tenant (and fail with ErrTenant if the item names
//     another tenant); updates and deletes only touch items of the tenant;
//   - Get and BatchGet treat other tenants' items as missing, and queries
//     skip them;
//   - cursors are bound to the tenant: another tenant's cursor is rejected
//     with ErrCursor.
func (t *Table) Scope(attr, tenant string) *Table {
	c := *t
	c.tenantAttr, c.tenant = attr, tenant
	return &c
}

// Tenant returns the tenant the view is scoped to, or "".
func (t *Table) Tenant() string { return t.tenant }

// key returns the item key of k in this table.
func (t *Table) key(k Key) Item {
	m := Item{t.schema.PK: &types.AttributeValueMemberS{Value: k.PK}}
	if t.schema.SK != "" {
		m[t.schema.SK] = &types.AttributeValueMemberS{Value: k.SK}
	}
	return m
}

// keyOf extracts the primary key of an item.
func (t *Table) keyOf(it Item) Key {
	return Key{PK: str(it[t.schema.PK]), SK: str(it[t.schema.SK])}
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// owns reports whether an item belongs to the view's tenant (always true
// when unscoped).
func (t *Table) owns(it Item) bool {
	if t.tenantAttr == "" || it == nil {
		return true
	}
	return str(it[t.tenantAttr]) == t.tenant
}

// tenantCond is the condition "item belongs to the tenant", or nil.
func (t *Table) tenantCond() *expression.ConditionBuilder {
	if t.tenantAttr == "" {
		return nil
	}
	c := expression.Name(t.tenantAttr).Equal(expression.Value(t.tenant))
	return &c
}

// Get reads one item. A missing item (or, through a scoped view, another
// tenant's item) is ErrNotFound.
func (t *Table) Get(ctx context.Context, k Key) (Item, error) { return t.get(ctx, k, false) }

// GetStrong is Get with a strongly consistent read.
func (t *Table) GetStrong(ctx context.Context, k Key) (Item, error) { return t.get(ctx, k, true) }

func (t *Table) get(ctx context.Context, k Key, strong bool) (Item, error) {
	start := time.Now()
	out, err := t.db.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:              aws.String(t.name),
		Key:                    t.key(k),
		ConsistentRead:         aws.Bool(strong),
		ReturnConsumedCapacity: t.db.consumed(),
	})
	var cc *types.ConsumedCapacity
	if out != nil {
		cc = out.ConsumedCapacity
	}
	t.db.observe(ctx, "GetItem", t.name, "", start, one(cc), err)
	if err != nil {
		return nil, wrapErr("GetItem", k, err)
	}
	if out.Item == nil || !t.owns(out.Item) {
		return nil, notFound(k)
	}
	return out.Item, nil
}
