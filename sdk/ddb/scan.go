package ddb

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Scan iterates over every item of the table that matches filter (nil for
// all), page by page. It reads the whole table, so it is for operator jobs
// (sweeps, repairs, migrations), never for a request path; a query is the
// answer there. Through a scoped view only the tenant's items are returned.
func (t *Table) Scan(ctx context.Context, filter *expression.ConditionBuilder) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		if tc := t.tenantCond(); tc != nil {
			filter = and(filter, *tc)
		}
		in := &dynamodb.ScanInput{TableName: aws.String(t.name), ReturnConsumedCapacity: t.db.consumed()}
		if filter != nil {
			e, err := expression.NewBuilder().WithFilter(*filter).Build()
			if err != nil {
				yield(nil, fmt.Errorf("%w: scan: %v", ErrInvalid, err))
				return
			}
			in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = e.Filter(), e.Names(), e.Values()
		}
		for {
			start := time.Now()
			out, err := t.db.client.Scan(ctx, in)
			var cc []types.ConsumedCapacity
			if out != nil {
				cc = one(out.ConsumedCapacity)
			}
			t.db.observe(ctx, "Scan", t.name, "", start, cc, err)
			if err != nil {
				yield(nil, fmt.Errorf("ddb: scan %s: %w", t.name, err))
				return
			}
			for _, it := range out.Items {
				if !yield(it, nil) {
					return
				}
			}
			if out.LastEvaluatedKey == nil {
				return
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
}

// Scan iterates over every item of this entity type that matches filter
// (nil for all). Like Table.Scan it reads the whole table: for operator
// jobs only.
func (e *Entity[T]) Scan(ctx context.Context, filter *expression.ConditionBuilder) iter.Seq2[*T, error] {
	typed := expression.Name(e.table.schema.typeAttr()).Equal(expression.Value(e.name))
	return func(yield func(*T, error) bool) {
		for it, err := range e.table.Scan(ctx, and(filter, typed)) {
			if err != nil {
				yield(nil, err)
				return
			}
			v, err := e.Unmarshal(it)
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}
