package stack

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// TableProperties returns the AWS::DynamoDB::Table properties of t for
// the table name (a string or an intrinsic). Keys, attribute definitions,
// indexes, billing and stream are converted from the schema's
// CreateTableInput — the request Ensure sends — so the template and Ensure
// cannot drift; TTL, PITR and SSE are added as CloudFormation sets them.
func TableProperties(t Table, name any) map[string]any {
	in := t.Schema.CreateTableInput("")
	p := map[string]any{
		"TableName":            name,
		"BillingMode":          string(in.BillingMode),
		"KeySchema":            keySchema(in),
		"AttributeDefinitions": attrDefs(in),
	}
	if len(in.GlobalSecondaryIndexes) > 0 {
		var gsis []any
		for _, g := range in.GlobalSecondaryIndexes {
			proj := map[string]any{"ProjectionType": string(g.Projection.ProjectionType)}
			if len(g.Projection.NonKeyAttributes) > 0 {
				proj["NonKeyAttributes"] = g.Projection.NonKeyAttributes
			}
			var ks []any
			for _, k := range g.KeySchema {
				ks = append(ks, map[string]any{"AttributeName": aws.ToString(k.AttributeName), "KeyType": string(k.KeyType)})
			}
			gsis = append(gsis, map[string]any{"IndexName": aws.ToString(g.IndexName), "KeySchema": ks, "Projection": proj})
		}
		p["GlobalSecondaryIndexes"] = gsis
	}
	view := t.Stream
	if in.StreamSpecification != nil {
		view = string(in.StreamSpecification.StreamViewType)
	}
	if view != "" {
		p["StreamSpecification"] = map[string]any{"StreamViewType": view}
	}
	if t.Schema.TTLAttribute != "" {
		p["TimeToLiveSpecification"] = map[string]any{"AttributeName": t.Schema.TTLAttribute, "Enabled": true}
	}
	if t.PITR {
		p["PointInTimeRecoverySpecification"] = map[string]any{"PointInTimeRecoveryEnabled": true}
	}
	if t.SSE {
		p["SSESpecification"] = map[string]any{"SSEEnabled": true, "SSEType": "KMS"}
	}
	return p
}

func keySchema(in *dynamodb.CreateTableInput) []any {
	var ks []any
	for _, k := range in.KeySchema {
		ks = append(ks, map[string]any{"AttributeName": aws.ToString(k.AttributeName), "KeyType": string(k.KeyType)})
	}
	return ks
}

func attrDefs(in *dynamodb.CreateTableInput) []any {
	var defs []any
	for _, d := range in.AttributeDefinitions {
		defs = append(defs, map[string]any{"AttributeName": aws.ToString(d.AttributeName), "AttributeType": string(d.AttributeType)})
	}
	return defs
}

func (s *Spec) tables(t *Template) {
	for _, tb := range s.Tables {
		t.add(tb.ID, Resource{
			Type:                "AWS::DynamoDB::Table",
			Properties:          withTags(TableProperties(tb, Sub(tb.Name)), "data"),
			DeletionPolicy:      "Retain",
			UpdateReplacePolicy: "Retain",
		})
	}
}

func withTags(p map[string]any, component string) map[string]any {
	p["Tags"] = tags(component)
	return p
}
