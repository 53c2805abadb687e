package ddb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Schema describes a single table: its key attributes, GSIs, TTL attribute,
// billing mode and the attribute that names each item's entity type. It holds
// no table name, so one Schema serves every stage ("PhotoService-dev",
// "PhotoService-prod") and every test table.
type Schema struct {
	PK, SK string // key attribute names; SK may be empty for a hash-only table

	Indexes []Index

	// TTLAttribute names the Number attribute holding epoch-seconds expiry.
	// Empty disables TTL.
	TTLAttribute string

	// TypeAttribute names the attribute holding each item's entity type
	// ("entityType" when empty).
	TypeAttribute string

	// BillingMode defaults to PAY_PER_REQUEST.
	BillingMode types.BillingMode

	// Stream, when set, turns the table's DynamoDB stream on with this view
	// type (e.g. NEW_AND_OLD_IMAGES) at creation; sdk/ddb/stream reads it.
	// Ensure does not change the stream of a table that already exists.
	Stream types.StreamViewType
}

// Index is a global secondary index with string key attributes.
type Index struct {
	Name   string
	PK, SK string
	// Projection defaults to ALL. With INCLUDE, NonKeyAttributes names
	// the attributes projected besides the table's and the index's keys.
	// DynamoDB cannot change the projection of an existing index: a
	// different projection needs a new index (Ensure creates missing
	// tables only).
	Projection       types.ProjectionType
	NonKeyAttributes []string
}

// ProjectionType returns the index's projection (ALL when unset).
func (ix Index) ProjectionType() types.ProjectionType {
	if ix.Projection == "" {
		return types.ProjectionTypeAll
	}
	return ix.Projection
}

// typeAttr returns the entity type attribute name.
func (s *Schema) typeAttr() string {
	if s.TypeAttribute == "" {
		return "entityType"
	}
	return s.TypeAttribute
}

// Index returns the named index, or false.
func (s *Schema) Index(name string) (Index, bool) {
	for _, ix := range s.Indexes {
		if ix.Name == name {
			return ix, true
		}
	}
	return Index{}, false
}

// keyAttrs returns the partition and sort key attribute names of the base
// table (index "") or of a GSI.
func (s *Schema) keyAttrs(index string) (pk, sk string, err error) {
	if index == "" {
		return s.PK, s.SK, nil
	}
	ix, ok := s.Index(index)
	if !ok {
		return "", "", fmt.Errorf("ddb: no index %q in schema", index)
	}
	return ix.PK, ix.SK, nil
}

// CreateTableInput returns the CreateTable request for a table of this schema.
func (s *Schema) CreateTableInput(name string) *dynamodb.CreateTableInput {
	seen := map[string]bool{}
	var defs []types.AttributeDefinition
	def := func(a string) {
		if a != "" && !seen[a] {
			seen[a] = true
			defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: types.ScalarAttributeTypeS})
		}
	}
	keySchema := func(pk, sk string) []types.KeySchemaElement {
		ks := []types.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash}}
		if sk != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange})
		}
		return ks
	}
	def(s.PK)
	def(s.SK)
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		KeySchema:   keySchema(s.PK, s.SK),
		BillingMode: s.BillingMode,
	}
	if in.BillingMode == "" {
		in.BillingMode = types.BillingModePayPerRequest
	}
	if s.Stream != "" {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: s.Stream}
	}
	for _, ix := range s.Indexes {
		def(ix.PK)
		def(ix.SK)
		proj := &types.Projection{ProjectionType: ix.ProjectionType()}
		if proj.ProjectionType == types.ProjectionTypeInclude {
			proj.NonKeyAttributes = ix.NonKeyAttributes
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.PK, ix.SK),
			Projection: proj,
		})
	}
	in.AttributeDefinitions = defs
	return in
}

// Ensure creates the table if it does not exist, waits until it is ACTIVE,
// and enables TTL when the schema names a TTL attribute. It is safe to call
// on every start.
func (t *Table) Ensure(ctx context.Context) error {
	_, err := t.db.client.CreateTable(ctx, t.schema.CreateTableInput(t.name))
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("ddb: create table %s: %w", t.name, err)
	}
	for {
		out, err := t.db.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
		if err != nil {
			return fmt.Errorf("ddb: describe table %s: %w", t.name, err)
		}
		if out.Table.TableStatus == types.TableStatusActive {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if t.schema.TTLAttribute != "" {
		return t.ensureTTL(ctx)
	}
	return nil
}

// Check reports whether the table is there to use, without creating or
// changing anything, for a process whose tables someone else creates (a
// deployment template): the table exists, is ACTIVE or UPDATING, has the
// schema's key attributes and every index the schema names. It makes one
// DescribeTable call. Anything else is ErrTable; a missing table's error
// also wraps DynamoDB's *types.ResourceNotFoundException.
func (t *Table) Check(ctx context.Context) error {
	out, err := t.db.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
	var missing *types.ResourceNotFoundException
	if errors.As(err, &missing) {
		return fmt.Errorf("%w: %s does not exist: %w", ErrTable, t.name, err)
	}
	if err != nil {
		return fmt.Errorf("ddb: describe table %s: %w", t.name, err)
	}
	d := out.Table
	if s := d.TableStatus; s != types.TableStatusActive && s != types.TableStatusUpdating {
		return fmt.Errorf("%w: %s is %s", ErrTable, t.name, s)
	}
	if pk, sk := keyNames(d.KeySchema); pk != t.schema.PK || sk != t.schema.SK {
		return fmt.Errorf("%w: %s has the key (%q, %q), the schema says (%q, %q)", ErrTable, t.name, pk, sk, t.schema.PK, t.schema.SK)
	}
	have := map[string][]types.KeySchemaElement{}
	for _, ix := range d.GlobalSecondaryIndexes {
		have[aws.ToString(ix.IndexName)] = ix.KeySchema
	}
	for _, ix := range t.schema.Indexes {
		ks, ok := have[ix.Name]
		if !ok {
			return fmt.Errorf("%w: %s has no index %s", ErrTable, t.name, ix.Name)
		}
		if pk, sk := keyNames(ks); pk != ix.PK || sk != ix.SK {
			return fmt.Errorf("%w: %s's index %s has the key (%q, %q), the schema says (%q, %q)", ErrTable, t.name, ix.Name, pk, sk, ix.PK, ix.SK)
		}
	}
	return nil
}

// keyNames returns the hash and range attributes of a key schema ("" for
// none).
func keyNames(ks []types.KeySchemaElement) (pk, sk string) {
	for _, k := range ks {
		switch k.KeyType {
		case types.KeyTypeHash:
			pk = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			sk = aws.ToString(k.AttributeName)
		}
	}
	return pk, sk
}

// StreamARN returns the ARN of the table's latest stream, or "" when the
// table has no stream (see Schema.Stream).
func (t *Table) StreamARN(ctx context.Context) (string, error) {
	out, err := t.db.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.name)})
	if err != nil {
		return "", fmt.Errorf("ddb: describe table %s: %w", t.name, err)
	}
	if s := out.Table.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) {
		return "", nil
	}
	return aws.ToString(out.Table.LatestStreamArn), nil
}

// ensureTTL enables TTL on the schema's attribute unless it already is. A
// table whose TTL is on another attribute is an error, not silently kept.
// Processes that start together may race to enable it: the loser's
// "TimeToLive is already enabled" is success once a second look shows the
// schema's attribute enabled.
func (t *Table) ensureTTL(ctx context.Context) error {
	on, err := t.ttlEnabled(ctx)
	if err != nil || on {
		return err
	}
	_, err = t.db.client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(t.name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(t.schema.TTLAttribute), Enabled: aws.Bool(true),
		},
	})
	if err != nil {
		if on, derr := t.ttlEnabled(ctx); derr == nil && on {
			return nil
		}
		return fmt.Errorf("ddb: enable TTL on %s: %w", t.name, err)
	}
	return nil
}

// ttlEnabled reports whether TTL is enabled (or enabling) on the schema's
// attribute; TTL on another attribute is ErrInvalid.
func (t *Table) ttlEnabled(ctx context.Context) (bool, error) {
	d, err := t.db.client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(t.name)})
	if err != nil {
		return false, fmt.Errorf("ddb: describe TTL of %s: %w", t.name, err)
	}
	desc := d.TimeToLiveDescription
	if desc == nil {
		return false, nil
	}
	switch desc.TimeToLiveStatus {
	case types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling:
		if cur := aws.ToString(desc.AttributeName); cur != t.schema.TTLAttribute {
			return false, fmt.Errorf("%w: table %s has TTL on %q, the schema says %q", ErrInvalid, t.name, cur, t.schema.TTLAttribute)
		}
		return true, nil
	}
	return false, nil
}
