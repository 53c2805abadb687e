package asynceventtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/capacity"
)

// DynamoDB's per-partition throughput limits (on-demand and provisioned
// alike): a partition of a table or of a global secondary index takes at
// most this many units per second, whatever the table's capacity.
const (
	PartitionWCU = capacity.PartitionWCU
	PartitionRCU = capacity.PartitionRCU
)

// LimitsDynamo wraps a DynamoDB client (DynamoDB Local) and enforces what
// DynamoDB Local does not: the per-partition throughput limits, scaled
// down by Scale so that the stand-in can reach them. Each partition key
// value of the table and of each GSI has a token bucket of
// PartitionWCU/Scale write units and PartitionRCU/Scale read units per
// second (one second of burst). Partition splitting for heat is not
// modelled: a key's bucket is the most one partition takes, which is the
// ceiling for one partition key value whose sort key rises monotonically
// (a new item always lands in the last partition).
//
// Writes are priced by the item's size (read before the write; an
// update's result predicted by capacity.Apply): ceil(size/1 KB) units,
// doubled in a transaction, on the item's partition, and each index entry
// it writes on that index's partition (capacity.Cost). A write whose
// table or index partition lacks the units is refused, as DynamoDB
// refuses it, before anything is written; an index short of units thus
// throttles the table write that feeds it (back-pressure):
//
//   - a single write, a read or a query: *types.ProvisionedThroughputExceededException
//     (the AWS SDK's retryer retries it);
//   - a transaction: *types.TransactionCanceledException with Code
//     "ThrottlingError" for the items that were short (ddb.DB.Transact
//     retries it).
//
// Reads are priced by what they return (a query by what it evaluates
// before its filter is not known here: by what it returns) and refused
// while the partition's read bucket is empty.
type LimitsDynamo struct {
	ddb.Client
	// Scale divides DynamoDB's limits (e.g. 50: 20 WCU/s per partition).
	Scale float64
	// Schemas maps table names to their schemas.
	Schemas map[string]*ddb.Schema
	// Now is the buckets' clock (default time.Now).
	Now func() time.Time

	mu        sync.Mutex
	buckets   map[string]*bucket
	throttled map[string]int64
	units     map[string]float64
}

// NewLimitsDynamo wraps c with limits divided by scale.
func NewLimitsDynamo(c ddb.Client, scale float64, schemas map[string]*ddb.Schema) *LimitsDynamo {
	return &LimitsDynamo{Client: c, Scale: scale, Schemas: schemas,
		buckets: map[string]*bucket{}, throttled: map[string]int64{}, units: map[string]float64{}}
}

type bucket struct {
	tokens, rate float64
	at           time.Time
}

func (b *bucket) refill(now time.Time) {
	b.tokens = min(b.rate, b.tokens+now.Sub(b.at).Seconds()*b.rate)
	b.at = now
}

// charge is units on one partition: kind is "W" or "R", index "" the table.
type charge struct {
	kind, index, pk string
	units           float64
}

func (c charge) key() string { return c.kind + "|" + c.index + "|" + c.pk }

// admit takes every charge's units, or none: it reports the charges that
// found their bucket short.
func (l *LimitsDynamo) admit(cs []charge) []charge {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.Now != nil {
		now = l.Now()
	}
	need := map[string]float64{}
	for _, c := range cs {
		need[c.key()] += c.units
	}
	var short []charge
	for _, c := range cs {
		b := l.buckets[c.key()]
		if b == nil {
			rate := PartitionWCU / l.Scale
			if c.kind == "R" {
				rate = PartitionRCU / l.Scale
			}
			b = &bucket{tokens: rate, rate: rate, at: now}
			l.buckets[c.key()] = b
		}
		b.refill(now)
		// A request larger than a second's units passes on a full bucket.
		if n := need[c.key()]; b.tokens < n && b.tokens < b.rate {
			short = append(short, c)
		}
	}
	if len(short) > 0 {
		for _, c := range short {
			l.throttled[c.key()]++
		}
		return short
	}
	for _, c := range cs {
		l.buckets[c.key()].tokens -= c.units
		l.units[c.key()] += c.units
	}
	return nil
}

// Throttled returns how many requests were refused for the write ("W")
// or read ("R") units of the partition pk of index ("" for the table).
func (l *LimitsDynamo) Throttled(kind, index, pk string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.throttled[charge{kind: kind, index: index, pk: pk}.key()]
}

// ThrottledBy sums the refusals per "kind|index|pk-prefix", the key's
// prefix up to its first '#' (REQ#, EVENT#, USER#...).
func (l *LimitsDynamo) ThrottledBy() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int64{}
	for k, n := range l.throttled {
		out[prefixKey(k)] += n
	}
	return out
}

// Units returns the units consumed on the partition pk of index.
func (l *LimitsDynamo) Units(kind, index, pk string) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.units[charge{kind: kind, index: index, pk: pk}.key()]
}

func prefixKey(k string) string {
	i := strings.LastIndexByte(k, '|')
	pk := k[i+1:]
	if j := strings.IndexByte(pk, '#'); j >= 0 {
		pk = pk[:j+1]
	}
	return k[:i+1] + pk
}

func (l *LimitsDynamo) image(ctx context.Context, table *string, key capacity.Item) capacity.Item {
	return capacity.Image(ctx, l.Client, table, l.Schemas[aws.ToString(table)], key)
}

// writeCharges prices one item write.
func (l *LimitsDynamo) writeCharges(s *ddb.Schema, before, after capacity.Item, tx bool) []charge {
	w := capacity.Cost(s, before, after, tx)
	cs := []charge{{kind: "W", pk: w.PK, units: float64(w.Units)}}
	for _, iw := range w.Indexes {
		cs = append(cs, charge{kind: "W", index: iw.Index, pk: iw.PK, units: float64(iw.Units)})
	}
	return cs
}

var errThroughput = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly."

func throughputErr(short []charge) error {
	msg := errThroughput
	for _, c := range short {
		if c.index != "" {
			msg = "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is automatically scaling your index so please try again shortly."
		}
	}
	return &types.ProvisionedThroughputExceededException{Message: aws.String(msg)}
}

func (l *LimitsDynamo) known(table *string) (*ddb.Schema, bool) {
	s := l.Schemas[aws.ToString(table)]
	return s, s != nil
}

// PutItem is refused when its partitions lack the units.
func (l *LimitsDynamo) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if s, ok := l.known(in.TableName); ok {
		if short := l.admit(l.writeCharges(s, l.image(ctx, in.TableName, in.Item), in.Item, false)); short != nil {
			return nil, throughputErr(short)
		}
	}
	return l.Client.PutItem(ctx, in, opts...)
}

// UpdateItem is refused when its partitions lack the units.
func (l *LimitsDynamo) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if s, ok := l.known(in.TableName); ok {
		before := l.image(ctx, in.TableName, in.Key)
		after := capacity.Apply(before, in.Key, aws.ToString(in.UpdateExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues)
		if short := l.admit(l.writeCharges(s, before, after, false)); short != nil {
			return nil, throughputErr(short)
		}
	}
	return l.Client.UpdateItem(ctx, in, opts...)
}

// DeleteItem is refused when its partitions lack the units.
func (l *LimitsDynamo) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if s, ok := l.known(in.TableName); ok {
		before := l.image(ctx, in.TableName, in.Key)
		if short := l.admit(l.writeCharges(s, before, nil, false)); short != nil && before != nil {
			return nil, throughputErr(short)
		}
	}
	return l.Client.DeleteItem(ctx, in, opts...)
}

// TransactWriteItems is cancelled with ThrottlingError reasons when a
// partition of one of its items lacks the units.
func (l *LimitsDynamo) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	var cs []charge
	owner := []int{}
	for i, it := range in.TransactItems {
		var (
			table  *string
			key    capacity.Item
			before capacity.Item
			after  capacity.Item
		)
		switch {
		case it.Put != nil:
			table, key = it.Put.TableName, it.Put.Item
		case it.Update != nil:
			table, key = it.Update.TableName, it.Update.Key
		case it.Delete != nil:
			table, key = it.Delete.TableName, it.Delete.Key
		case it.ConditionCheck != nil:
			table, key = it.ConditionCheck.TableName, it.ConditionCheck.Key
		}
		s, ok := l.known(table)
		if !ok {
			return l.Client.TransactWriteItems(ctx, in, opts...)
		}
		before = l.image(ctx, table, key)
		switch {
		case it.Put != nil:
			after = it.Put.Item
		case it.Update != nil:
			after = capacity.Apply(before, key, aws.ToString(it.Update.UpdateExpression), it.Update.ExpressionAttributeNames, it.Update.ExpressionAttributeValues)
		case it.ConditionCheck != nil:
			after = before
		}
		for _, c := range l.writeCharges(s, before, after, true) {
			cs = append(cs, c)
			owner = append(owner, i)
		}
	}
	if short := l.admit(cs); short != nil {
		bad := map[int]bool{}
		for _, sc := range short {
			for j, c := range cs {
				if c.key() == sc.key() {
					bad[owner[j]] = true
				}
			}
		}
		reasons := make([]types.CancellationReason, len(in.TransactItems))
		codes := make([]string, len(in.TransactItems))
		for i := range reasons {
			codes[i] = "None"
			if bad[i] {
				codes[i] = "ThrottlingError"
				reasons[i].Message = aws.String(errThroughput)
			}
			reasons[i].Code = aws.String(codes[i])
		}
		return nil, &types.TransactionCanceledException{
			Message:             aws.String(fmt.Sprintf("Transaction cancelled, please refer cancellation reasons for specific reasons [%s]", strings.Join(codes, ", "))),
			CancellationReasons: reasons,
		}
	}
	return l.Client.TransactWriteItems(ctx, in, opts...)
}

// readAdmit refuses a read while its partition's read bucket is empty.
func (l *LimitsDynamo) readAdmit(index, pk string) error {
	if short := l.admit([]charge{{kind: "R", index: index, pk: pk, units: 0}}); short != nil {
		return throughputErr(short)
	}
	return nil
}

func (l *LimitsDynamo) readCharge(index, pk string, size int, strong bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := charge{kind: "R", index: index, pk: pk}.key()
	u := capacity.ReadUnits(size, strong)
	if b := l.buckets[k]; b != nil {
		b.tokens -= u
	}
	l.units[k] += u
}

// GetItem is refused while its partition's read units are spent.
func (l *LimitsDynamo) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	s, ok := l.known(in.TableName)
	if !ok {
		return l.Client.GetItem(ctx, in, opts...)
	}
	pk := keyString(in.Key[s.PK])
	if err := l.readAdmit("", pk); err != nil {
		return nil, err
	}
	out, err := l.Client.GetItem(ctx, in, opts...)
	if err == nil {
		l.readCharge("", pk, capacity.Size(out.Item), aws.ToBool(in.ConsistentRead))
	}
	return out, err
}

// Query is refused while its partition's read units are spent.
func (l *LimitsDynamo) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	s, ok := l.known(in.TableName)
	if !ok {
		return l.Client.Query(ctx, in, opts...)
	}
	index := aws.ToString(in.IndexName)
	pkName := s.PK
	if ix, ok := s.Index(index); ok {
		pkName = ix.PK
	}
	pk := ""
	for p, n := range in.ExpressionAttributeNames {
		if n == pkName && strings.Contains(aws.ToString(in.KeyConditionExpression), p) {
			for v, val := range in.ExpressionAttributeValues {
				if strings.Contains(aws.ToString(in.KeyConditionExpression), p+" = "+v) {
					pk = keyString(val)
				}
			}
		}
	}
	if err := l.readAdmit(index, pk); err != nil {
		return nil, err
	}
	out, err := l.Client.Query(ctx, in, opts...)
	if err == nil {
		size := 0
		for _, it := range out.Items {
			size += capacity.Size(it)
		}
		l.readCharge(index, pk, size, aws.ToBool(in.ConsistentRead))
	}
	return out, err
}

func keyString(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
