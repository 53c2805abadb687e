package main

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The scratch table copies the product table's keys, GSIs with their
// projections and stream, on demand.
func TestCopyTable(t *testing.T) {
	key := func(pk, sk string) []dtypes.KeySchemaElement {
		return []dtypes.KeySchemaElement{{AttributeName: aws.String(pk), KeyType: dtypes.KeyTypeHash}, {AttributeName: aws.String(sk), KeyType: dtypes.KeyTypeRange}}
	}
	narrow := &dtypes.Projection{ProjectionType: dtypes.ProjectionTypeInclude, NonKeyAttributes: []string{"requestId", "queuedAt"}}
	product := &dtypes.TableDescription{
		TableName:            aws.String("AsyncEventTable"),
		AttributeDefinitions: []dtypes.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: dtypes.ScalarAttributeTypeS}},
		KeySchema:            key("PK", "SK"),
		GlobalSecondaryIndexes: []dtypes.GlobalSecondaryIndexDescription{
			{IndexName: aws.String("GSI1"), KeySchema: key("GSI1PK", "GSI1SK"), Projection: &dtypes.Projection{ProjectionType: dtypes.ProjectionTypeAll}, IndexStatus: dtypes.IndexStatusActive},
			{IndexName: aws.String("GSI2"), KeySchema: key("GSI2PK", "GSI2SK"), Projection: narrow},
		},
		StreamSpecification: &dtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: dtypes.StreamViewTypeNewAndOldImages},
	}
	in := copyTable(product, "scratch")
	if aws.ToString(in.TableName) != "scratch" || in.BillingMode != dtypes.BillingModePayPerRequest {
		t.Errorf("name %q billing %q", aws.ToString(in.TableName), in.BillingMode)
	}
	if len(in.AttributeDefinitions) != 1 || len(in.KeySchema) != 2 || aws.ToString(in.KeySchema[1].AttributeName) != "SK" {
		t.Errorf("keys %+v %+v", in.AttributeDefinitions, in.KeySchema)
	}
	if len(in.GlobalSecondaryIndexes) != 2 || aws.ToString(in.GlobalSecondaryIndexes[1].IndexName) != "GSI2" ||
		in.GlobalSecondaryIndexes[1].Projection != narrow || aws.ToString(in.GlobalSecondaryIndexes[0].KeySchema[0].AttributeName) != "GSI1PK" {
		t.Errorf("GSIs %+v", in.GlobalSecondaryIndexes)
	}
	// The stream is not copied (see copyTable).
	if in.StreamSpecification != nil {
		t.Errorf("the product's stream copied as %+v", in.StreamSpecification)
	}
}
