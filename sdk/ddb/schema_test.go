package ddb_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

func TestCreateTableInput(t *testing.T) {
	in := schema.CreateTableInput("AsyncEventTable")
	if aws.ToString(in.TableName) != "AsyncEventTable" || in.BillingMode != types.BillingModePayPerRequest {
		t.Fatalf("table %q billing %q", aws.ToString(in.TableName), in.BillingMode)
	}
	if len(in.AttributeDefinitions) != 6 {
		t.Fatalf("%d attribute definitions, want 6 (PK SK GSI1PK GSI1SK GSI2PK GSI2SK)", len(in.AttributeDefinitions))
	}
	if len(in.GlobalSecondaryIndexes) != 2 {
		t.Fatalf("%d GSIs", len(in.GlobalSecondaryIndexes))
	}
	for _, g := range in.GlobalSecondaryIndexes {
		if g.Projection.ProjectionType != types.ProjectionTypeAll || len(g.KeySchema) != 2 {
			t.Fatalf("GSI %s: projection %q, %d keys", aws.ToString(g.IndexName), g.Projection.ProjectionType, len(g.KeySchema))
		}
	}
	hashOnly := ddb.Schema{PK: "id", BillingMode: types.BillingModeProvisioned}
	in = hashOnly.CreateTableInput("t")
	if len(in.KeySchema) != 1 || len(in.AttributeDefinitions) != 1 || in.BillingMode != types.BillingModeProvisioned {
		t.Fatalf("hash-only table: %+v", in)
	}
}

// Ensure can run on every start: the second call finds the table and the
// TTL already enabled and succeeds.
func TestEnsureIsIdempotentAndEnablesTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema) // the first Ensure
	for i := 0; i < 2; i++ {
		if err := env.Table.Ensure(ctx); err != nil {
			t.Fatalf("Ensure #%d: %v", i+2, err)
		}
	}
	if n := env.Calls.Count("DynamoDB.CreateTable"); n != 2 {
		t.Fatalf("%d CreateTable calls, want 2", n)
	}
	if n := env.Calls.Count("DynamoDB.UpdateTimeToLive"); n != 0 {
		t.Fatalf("TTL already on, yet %d UpdateTimeToLive calls", n)
	}
	ttl, err := env.Client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(env.Table.Name())})
	if err != nil {
		t.Fatal(err)
	}
	d := ttl.TimeToLiveDescription
	if d == nil || aws.ToString(d.AttributeName) != "ttl" || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Fatalf("TTL = %+v, want ttl ENABLED", d)
	}
	desc, err := env.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(env.Table.Name())})
	if err != nil {
		t.Fatal(err)
	}
	if desc.Table.TableStatus != types.TableStatusActive || len(desc.Table.GlobalSecondaryIndexes) != 2 {
		t.Fatalf("table %s with %d GSIs", desc.Table.TableStatus, len(desc.Table.GlobalSecondaryIndexes))
	}
}

// Services that start together (make run starts the AsyncEvent API and
// worker at once) each Ensure the same new table: every one succeeds, though
// only one of them can create it and enable its TTL.
func TestEnsureConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	name := env.Table.Name() + "-race"
	t.Cleanup(func() {
		_, _ = env.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() { errs <- env.DB.Table(name, &schema).Ensure(ctx) }()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	ttl, err := env.Client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Fatalf("TTL = %+v, want ENABLED", d)
	}
}

// A schema without a TTL attribute makes no UpdateTimeToLive call.
func TestEnsureWithoutTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := ddb.Schema{PK: "id"}
	env := ddbtest.New(t, &s)
	if err := env.Table.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if n := env.Calls.Count("DynamoDB.UpdateTimeToLive"); n != 0 {
		t.Fatalf("%d UpdateTimeToLive calls", n)
	}
	ttl, err := env.Client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(env.Table.Name())})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d != nil && d.TimeToLiveStatus == types.TimeToLiveStatusEnabled {
		t.Fatalf("TTL enabled without a TTL attribute: %+v", d)
	}
}

// A table whose TTL is on another attribute than the schema says is an
// error, not silently accepted.
func TestEnsureRejectsTTLOnAnotherAttribute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	other := schema
	other.TTLAttribute = "expiresAt"
	err := env.DB.Table(env.Table.Name(), &other).Ensure(ctx)
	if !errors.Is(err, ddb.ErrInvalid) || !strings.Contains(err.Error(), `"ttl"`) {
		t.Fatalf("want ErrInvalid naming the current TTL attribute, got %v", err)
	}
}

// Check accepts the table Ensure made with one DescribeTable call, and
// refuses, creating nothing, a missing table and one without the schema's
// key or an index of it.
func TestCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	if err := env.Table.Check(ctx); err != nil {
		t.Fatalf("the table Ensure made: %v", err)
	}
	if n, d := env.Calls.Total(), env.Calls.Count("DynamoDB.DescribeTable"); n != 1 || d != 1 {
		t.Fatalf("%d calls, %d of them DescribeTable; want just one DescribeTable", n, d)
	}

	missing := env.DB.Table(env.Table.Name()+"-missing", &schema)
	err := missing.Check(ctx)
	var notFound *types.ResourceNotFoundException
	if !errors.Is(err, ddb.ErrTable) || !errors.As(err, &notFound) || !strings.Contains(err.Error(), missing.Name()+" does not exist") {
		t.Fatalf("a missing table: %v, want ErrTable wrapping ResourceNotFoundException and naming it", err)
	}
	if n := env.Calls.Count("DynamoDB.CreateTable"); n != 0 {
		t.Fatalf("Check called CreateTable %d times", n)
	}

	moreIndexes := schema
	moreIndexes.Indexes = append([]ddb.Index{{Name: "GSI9", PK: "GSI9PK", SK: "GSI9SK"}}, schema.Indexes...)
	otherKey := schema
	otherKey.SK = "sk"
	otherIndexKey := schema
	otherIndexKey.Indexes = append([]ddb.Index(nil), schema.Indexes...)
	otherIndexKey.Indexes[0].SK = "other"
	for _, c := range []struct {
		name   string
		schema ddb.Schema
		want   string
	}{
		{"an index too many", moreIndexes, "has no index GSI9"},
		{"another sort key", otherKey, `has the key ("PK", "SK"), the schema says ("PK", "sk")`},
		{"another index key", otherIndexKey, "index " + schema.Indexes[0].Name + " has the key"},
	} {
		err := env.DB.Table(env.Table.Name(), &c.schema).Check(ctx)
		if !errors.Is(err, ddb.ErrTable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrTable saying %q", c.name, err, c.want)
		}
	}
}

// An INCLUDE index is created with its non-key attributes, and DynamoDB
// Local keeps exactly them: a query of the index returns the keys and
// those attributes only.
func TestIncludeProjection(t *testing.T) {
	ctx := context.Background()
	s := ddb.Schema{PK: "PK", SK: "SK", Indexes: []ddb.Index{{Name: "GSI", PK: "GPK", SK: "GSK",
		Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"kept"}}}}
	in := s.CreateTableInput("t")
	if p := in.GlobalSecondaryIndexes[0].Projection; p.ProjectionType != types.ProjectionTypeInclude || len(p.NonKeyAttributes) != 1 {
		t.Fatalf("projection %+v", p)
	}
	env := ddbtest.New(t, &s)
	sv := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table.Name()), Item: map[string]types.AttributeValue{
		"PK": sv("a"), "SK": sv("b"), "GPK": sv("g"), "GSK": sv("1"), "kept": sv("k"), "status": sv("QUEUED")}}); err != nil {
		t.Fatal(err)
	}
	out, err := env.Client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(env.Table.Name()), IndexName: aws.String("GSI"),
		KeyConditionExpression: aws.String("GPK = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": sv("g")}})
	if err != nil || len(out.Items) != 1 {
		t.Fatalf("query: %v, %v", out, err)
	}
	if it := out.Items[0]; len(it) != 5 || it["kept"] == nil || it["status"] != nil {
		t.Fatalf("index entry %v, want the four keys and kept", it)
	}
}
