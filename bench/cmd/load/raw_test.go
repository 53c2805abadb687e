package main

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
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

// On the product table the raw loops' Requests are not Requests to the
// stream's readers, so the analytics publisher skips their records; on a
// scratch table they are the product's own entity type. Same size either
// way.
func TestRawRequestsOnTheProductTable(t *testing.T) {
	r := rawReq{id: "RAWx1", event: "raw-x", user: "raw-user-1"}
	for _, tc := range []struct {
		onProduct   bool
		wantRequest bool
	}{{true, false}, {false, true}} {
		s := &standins{onProduct: tc.onProduct}
		it := r.requestItem(1, s.requestEntity())
		_, cur, ok, err := dynamostore.RequestChange(&stream.Record{Kind: stream.Insert, NewImage: it})
		if err != nil || ok != tc.wantRequest || (cur != nil) != tc.wantRequest {
			t.Errorf("onProduct %v: RequestChange ok %v cur %v err %v, want a Request %v", tc.onProduct, ok, cur, err, tc.wantRequest)
		}
	}
	if len(rawRequestEntity) != len("REQUEST") {
		t.Errorf("rawRequestEntity %q is not as long as REQUEST: the raw item would not cost what the product's does", rawRequestEntity)
	}
	// Every key written is kept once, for clean; none on a scratch table.
	s := &standins{onProduct: true}
	s.logPut(r, "", "RECEIVED", 5, "received")
	s.logPut(r, "", "RECEIVED", 5, "received")
	s.wrote(r.pk(), "META")
	if len(s.written) != 2 {
		t.Errorf("written %v, want the log and META keys once each", s.written)
	}
	for k := range s.written {
		if k != [2]string{"REQ#RAWx1", "LOG#0000000000005#RECEIVED"} && k != [2]string{"REQ#RAWx1", "META"} {
			t.Errorf("written key %v, want the log and META keys", k)
		}
	}
	sc := &standins{}
	sc.logPut(r, "", "RECEIVED", 5, "received")
	if sc.written != nil {
		t.Errorf("a scratch table's writes are tracked: %v", sc.written)
	}
}
