package capacity

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// Meter wraps a DynamoDB client and records what each call costs, from
// the real items: before and after every write it reads the item (a
// strongly consistent GetItem through the wrapped client, not recorded)
// and prices the change with Cost; a read is priced by the items it
// returned (a query by the items it evaluated: it is asked again without
// its filter). It is for measurement, with one call at a time: writes of
// concurrent calls to one item would mix their images.
//
// Tables it does not know (no schema in Schemas) pass through unrecorded.
type Meter struct {
	ddb.Client
	// Schemas maps table names to their schemas.
	Schemas map[string]*ddb.Schema

	mu    sync.Mutex
	calls []Call
}

// Call is one recorded call and what it cost.
type Call struct {
	// Op is the API operation ("TransactWriteItems", "Query"...).
	Op    string
	Table string
	// Index is the index a query read ("" for the table).
	Index string
	// Writes are the item writes, each with its index writes; a refused
	// conditional write is priced with its item as it stayed.
	Writes []Write
	// Checks are the condition checks of a transaction (priced as
	// transactional writes of the item, with no index writes).
	Checks []Write
	// Reads are what the call read.
	Reads []Read
	// Failed marks a call that returned an error.
	Failed bool
}

// Read is what one read returned or evaluated.
type Read struct {
	// PK is the partition read (table or index key value).
	PK    string
	Index string
	// Items and Size are the items evaluated and their total size.
	Items, Size int
	Units       float64
}

// NewMeter wraps c; schemas maps table names to their schemas.
func NewMeter(c ddb.Client, schemas map[string]*ddb.Schema) *Meter {
	return &Meter{Client: c, Schemas: schemas}
}

// Take returns the calls recorded since the last Take and forgets them.
func (m *Meter) Take() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.calls
	m.calls = nil
	return c
}

func (m *Meter) record(c Call) {
	m.mu.Lock()
	m.calls = append(m.calls, c)
	m.mu.Unlock()
}

func (m *Meter) image(ctx context.Context, table *string, key Item) Item {
	return Image(ctx, m.Client, table, m.Schemas[aws.ToString(table)], key)
}

func (m *Meter) known(table *string) bool { return m.Schemas[aws.ToString(table)] != nil }

// write measures one single-item write.
func (m *Meter) write(ctx context.Context, op string, table *string, key Item, do func() error) error {
	if !m.known(table) {
		return do()
	}
	before := m.image(ctx, table, key)
	err := do()
	after := m.image(ctx, table, key)
	c := Call{Op: op, Table: aws.ToString(table), Failed: err != nil}
	s := m.Schemas[c.Table]
	if err != nil {
		w := Cost(s, before, nil, false)
		w.Indexes = nil
		if before == nil {
			w = Write{PK: str(key[s.PK]), Units: 1}
		}
		c.Writes = []Write{w}
	} else {
		c.Writes = []Write{Cost(s, before, after, false)}
	}
	m.record(c)
	return err
}

// PutItem is measured.
func (m *Meter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.PutItemOutput, err error) {
	err = m.write(ctx, "PutItem", in.TableName, in.Item, func() error {
		out, err = m.Client.PutItem(ctx, in, opts...)
		return err
	})
	return out, err
}

// UpdateItem is measured.
func (m *Meter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.UpdateItemOutput, err error) {
	err = m.write(ctx, "UpdateItem", in.TableName, in.Key, func() error {
		out, err = m.Client.UpdateItem(ctx, in, opts...)
		return err
	})
	return out, err
}

// DeleteItem is measured.
func (m *Meter) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.DeleteItemOutput, err error) {
	err = m.write(ctx, "DeleteItem", in.TableName, in.Key, func() error {
		out, err = m.Client.DeleteItem(ctx, in, opts...)
		return err
	})
	return out, err
}

// TransactWriteItems is measured item by item. A cancelled transaction
// is recorded as Failed with no writes.
func (m *Meter) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	type target struct {
		table *string
		key   Item
		check bool
	}
	ts := make([]target, len(in.TransactItems))
	for i, it := range in.TransactItems {
		switch {
		case it.Put != nil:
			ts[i] = target{it.Put.TableName, it.Put.Item, false}
		case it.Update != nil:
			ts[i] = target{it.Update.TableName, it.Update.Key, false}
		case it.Delete != nil:
			ts[i] = target{it.Delete.TableName, it.Delete.Key, false}
		case it.ConditionCheck != nil:
			ts[i] = target{it.ConditionCheck.TableName, it.ConditionCheck.Key, true}
		}
		if !m.known(ts[i].table) {
			return m.Client.TransactWriteItems(ctx, in, opts...)
		}
	}
	before := make([]Item, len(ts))
	for i, t := range ts {
		before[i] = m.image(ctx, t.table, t.key)
	}
	out, err := m.Client.TransactWriteItems(ctx, in, opts...)
	c := Call{Op: "TransactWriteItems", Table: aws.ToString(ts[0].table), Failed: err != nil}
	if err == nil {
		for i, t := range ts {
			s := m.Schemas[aws.ToString(t.table)]
			if t.check {
				w := Cost(s, before[i], before[i], true)
				w.Indexes = nil
				c.Checks = append(c.Checks, w)
				continue
			}
			c.Writes = append(c.Writes, Cost(s, before[i], m.image(ctx, t.table, t.key), true))
		}
	}
	m.record(c)
	return out, err
}

// BatchWriteItem is measured item by item (items left unprocessed are
// priced as they stand).
func (m *Meter) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	type target struct {
		table string
		key   Item
	}
	var ts []target
	for table, reqs := range in.RequestItems {
		if !m.known(&table) {
			return m.Client.BatchWriteItem(ctx, in, opts...)
		}
		for _, r := range reqs {
			if r.PutRequest != nil {
				ts = append(ts, target{table, r.PutRequest.Item})
			} else if r.DeleteRequest != nil {
				ts = append(ts, target{table, r.DeleteRequest.Key})
			}
		}
	}
	before := make([]Item, len(ts))
	for i, t := range ts {
		before[i] = m.image(ctx, &t.table, t.key)
	}
	out, err := m.Client.BatchWriteItem(ctx, in, opts...)
	c := Call{Op: "BatchWriteItem", Failed: err != nil}
	for i, t := range ts {
		c.Table = t.table
		c.Writes = append(c.Writes, Cost(m.Schemas[t.table], before[i], m.image(ctx, &t.table, t.key), false))
	}
	m.record(c)
	return out, err
}

// GetItem is measured by the item returned.
func (m *Meter) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := m.Client.GetItem(ctx, in, opts...)
	if !m.known(in.TableName) {
		return out, err
	}
	c := Call{Op: "GetItem", Table: aws.ToString(in.TableName), Failed: err != nil}
	if err == nil {
		size := Size(out.Item)
		c.Reads = []Read{{PK: str(in.Key[m.Schemas[c.Table].PK]), Items: min(1, len(out.Item)), Size: size,
			Units: ReadUnits(size, aws.ToBool(in.ConsistentRead))}}
	}
	m.record(c)
	return out, err
}

// BatchGetItem is measured item by item.
func (m *Meter) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := m.Client.BatchGetItem(ctx, in, opts...)
	c := Call{Op: "BatchGetItem", Failed: err != nil}
	if err == nil {
		for table, items := range out.Responses {
			if !m.known(&table) {
				return out, err
			}
			c.Table = table
			strong := aws.ToBool(in.RequestItems[table].ConsistentRead)
			for _, it := range items {
				size := Size(it)
				c.Reads = append(c.Reads, Read{PK: str(it[m.Schemas[table].PK]), Items: 1, Size: size, Units: ReadUnits(size, strong)})
			}
		}
	}
	m.record(c)
	return out, err
}

// Query is measured by the items it evaluated: the page is read again
// without the filter and the projection.
func (m *Meter) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := m.Client.Query(ctx, in, opts...)
	if !m.known(in.TableName) {
		return out, err
	}
	c := Call{Op: "Query", Table: aws.ToString(in.TableName), Index: aws.ToString(in.IndexName), Failed: err != nil}
	if err == nil {
		raw := *in
		raw.FilterExpression, raw.ProjectionExpression, raw.Select = nil, nil, ""
		if raw.ExpressionAttributeNames != nil || raw.ExpressionAttributeValues != nil {
			raw.ExpressionAttributeNames, raw.ExpressionAttributeValues = used(&raw)
		}
		all, rerr := m.Client.Query(ctx, &raw)
		if rerr == nil {
			r := Read{Index: c.Index, Items: len(all.Items)}
			for _, it := range all.Items {
				r.Size += Size(it)
			}
			r.Units = ReadUnits(r.Size, aws.ToBool(in.ConsistentRead))
			if len(all.Items) > 0 {
				s := m.Schemas[c.Table]
				pk := s.PK
				if ix, ok := s.Index(c.Index); ok {
					pk = ix.PK
				}
				r.PK = str(all.Items[0][pk])
			}
			c.Reads = []Read{r}
		}
	}
	m.record(c)
	return out, err
}

// used keeps the expression names and values the key condition refers to
// (DynamoDB refuses unused ones).
func used(in *dynamodb.QueryInput) (map[string]string, map[string]types.AttributeValue) {
	expr := aws.ToString(in.KeyConditionExpression)
	names := map[string]string{}
	for k, v := range in.ExpressionAttributeNames {
		if contains(expr, k) {
			names[k] = v
		}
	}
	values := map[string]types.AttributeValue{}
	for k, v := range in.ExpressionAttributeValues {
		if contains(expr, k) {
			values[k] = v
		}
	}
	if len(names) == 0 {
		names = nil
	}
	if len(values) == 0 {
		values = nil
	}
	return names, values
}

// contains reports whether the expression refers to the placeholder p
// (not as a prefix of a longer one: "#1" is not in "#10").
func contains(expr, p string) bool {
	for i := 0; i+len(p) <= len(expr); i++ {
		if expr[i:i+len(p)] == p {
			end := i + len(p)
			if end == len(expr) || !(expr[end] >= '0' && expr[end] <= '9') {
				return true
			}
		}
	}
	return false
}
