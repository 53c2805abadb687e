package stack

import (
	"strconv"

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
	if in.StreamSpecification != nil {
		p["StreamSpecification"] = map[string]any{"StreamViewType": string(in.StreamSpecification.StreamViewType)}
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

// Keeping data: a table (or bucket) the stack deletes, or replaces on an
// update, is kept with its data (Retain), except when the stack's first
// create fails: CloudFormation then deletes it with the rest
// (RetainExceptOnCreate), so the retry does not stop at "already exists"
// on a named table. CloudFormation takes RetainExceptOnCreate as a
// DeletionPolicy only; UpdateReplacePolicy stays Retain.
const (
	keepExceptOnCreate = "RetainExceptOnCreate"
	keepOnReplace      = "Retain"
)

// Deletion protection: with ParamDeletionProtection "true" DynamoDB
// refuses to delete the tables, whoever asks, until it is turned off
// (docs/deploy.md's teardown turns it off first). It guards what the
// DeletionPolicy cannot: a DeleteTable call of a person or a script. It is
// off by default and turned on for a production stage by an update once
// its first create has completed: on a failed first create it would keep
// the tables (CloudFormation cannot delete them either), and the retry
// would stop on their names. A Disposable table, which goes with the
// stack, never has it: it would fail the stack's delete.
const (
	ParamDeletionProtection = "TableDeletionProtection"
	condDeletionProtection  = "ProtectTables"
)

func deletionProtectionParameter(p map[string]Parameter) {
	p[ParamDeletionProtection] = Parameter{Type: "String", Default: str("false"), AllowedValues: []string{"true", "false"},
		Description: "DynamoDB deletion protection on the stage's kept tables: true refuses every DeleteTable until it is turned off; " +
			"set it on a production stage by an update once its first create has completed (a failed first create could not delete protected tables)"}
}

func (s *Spec) tables(t *Template) {
	t.Conditions[condDeletionProtection] = map[string]any{"Fn::Equals": []any{Ref(ParamDeletionProtection), "true"}}
	for _, tb := range s.Tables {
		props := withTags(TableProperties(tb, Sub(tb.Name)), "data")
		if !tb.Disposable {
			props["DeletionProtectionEnabled"] = If(condDeletionProtection, true, false)
		}
		if tb.Warm {
			props["WarmThroughput"] = warmThroughput(tb)
			for _, g := range props["GlobalSecondaryIndexes"].([]any) {
				g.(map[string]any)["WarmThroughput"] = warmThroughput(tb)
			}
		}
		r := Resource{Type: "AWS::DynamoDB::Table", Properties: props, DeletionPolicy: keepExceptOnCreate, UpdateReplacePolicy: keepOnReplace}
		if tb.Disposable {
			r.DeletionPolicy, r.UpdateReplacePolicy = "", ""
		}
		t.add(tb.ID, r)
	}
}

// A table's warm throughput: the reads and writes per second it serves at
// once, without the throttling of an on-demand table scaling up to a
// sale's opening (a new on-demand table is warm for 12,000 reads and 4,000
// writes per second). Raising it is billed once per increase, takes
// effect within minutes, and cannot be undone: warm throughput is never
// lowered, and setting the parameters back to 0 leaves the table as warm
// as it is. Each partition still serves at most 3,000 reads and 1,000
// writes per second (docs/capacity.md's hot items are not helped).
//
// Every write of a participation also writes the table's indexes, so the
// same figures warm each index too. DynamoDB refuses a warm throughput
// below what a new on-demand table already has (WarmReadFloor,
// WarmWriteFloor); CloudFormation's Rules cannot compare numbers, so the
// parameters are strings whose AllowedPattern accepts 0 (off) or a value
// at or above the floor, and a refused value stops the deploy before
// anything changes.
const (
	WarmReadFloor  = 12000
	WarmWriteFloor = 4000
	// WarmReadPattern and WarmWritePattern: 0, or an integer at or above
	// the floor.
	WarmReadPattern  = `^(0|1[2-9][0-9]{3}|[2-9][0-9]{4}|[1-9][0-9]{5,8})$`
	WarmWritePattern = `^(0|[4-9][0-9]{3}|[1-9][0-9]{4,8})$`
)

func warmReadParam(tb Table) string  { return tb.ID + "WarmReadUnits" }
func warmWriteParam(tb Table) string { return tb.ID + "WarmWriteUnits" }
func condWarm(tb Table) string       { return "Has" + tb.ID + "WarmThroughput" }

// warmParameters adds each Warm table's two parameters, 0 (off) by default.
func (s *Spec) warmParameters(p map[string]Parameter) {
	for _, tb := range s.Tables {
		if !tb.Warm {
			continue
		}
		for _, w := range []struct {
			name, what, pattern string
			floor               int
		}{{warmReadParam(tb), "read", WarmReadPattern, WarmReadFloor}, {warmWriteParam(tb), "write", WarmWritePattern, WarmWriteFloor}} {
			floor := strconv.Itoa(w.floor)
			p[w.name] = Parameter{Type: "String", Default: str("0"), AllowedPattern: w.pattern,
				Description: "Warm throughput of " + tb.ID + " and each of its indexes in " + w.what + " units per second, for a sale day: " +
					"raise it hours before (billed once per increase, never lowered again); 0 leaves it as it is",
				ConstraintDescription: "0 (off), or a whole number of at least " + floor + " (DynamoDB's floor) and at most 999999999"}
		}
	}
}

// warmConditions adds, per Warm table, Has<param> for each parameter set
// and Has<ID>WarmThroughput for either.
func (s *Spec) warmConditions(t *Template) {
	for _, tb := range s.Tables {
		if !tb.Warm {
			continue
		}
		for _, p := range []string{warmReadParam(tb), warmWriteParam(tb)} {
			t.Conditions[condHas(p)] = map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{Ref(p), "0"}}}}
		}
		t.Conditions[condWarm(tb)] = map[string]any{"Fn::Or": []any{
			map[string]any{"Condition": condHas(warmReadParam(tb))}, map[string]any{"Condition": condHas(warmWriteParam(tb))}}}
	}
}

// warmThroughput is a Warm table's WarmThroughput: the parameters that
// are set, or nothing.
func warmThroughput(tb Table) any {
	units := func(p string) any { return If(condHas(p), Ref(p), NoValue) }
	return If(condWarm(tb), map[string]any{
		"ReadUnitsPerSecond": units(warmReadParam(tb)), "WriteUnitsPerSecond": units(warmWriteParam(tb)),
	}, NoValue)
}

func withTags(p map[string]any, component string) map[string]any {
	p["Tags"] = tags(component)
	return p
}
