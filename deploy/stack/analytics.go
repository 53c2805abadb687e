package stack

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Logical ids of the analytics pipeline.
const (
	idEventBus     = "EventBus"
	idEventsBucket = "EventsBucket"
	idFirehose     = "EventsFirehose"
	idFirehoseRole = "EventsFirehoseRole"
	idRuleRole     = "EventsRuleRole"
	idRuleDLQ      = "EventsRuleDLQ"
	idGlueDB       = "AnalyticsDatabase"
	idWorkgroup    = "AnalyticsWorkGroup"
)

// withBucket replaces ${bucket} in s with the events bucket's name.
func withBucket(s string) any {
	parts := strings.Split(s, "${bucket}")
	if len(parts) == 1 {
		return s
	}
	var out []any
	for i, p := range parts {
		if i > 0 {
			out = append(out, Ref(idEventsBucket))
		}
		if p != "" {
			out = append(out, p)
		}
	}
	return Join("", out...)
}

// resultsPrefix is where Athena writes query results, in the events
// bucket: a separate bucket of the stack's own would be non-empty once
// any query has run, and CloudFormation cannot delete a non-empty bucket,
// so the stack's delete would fail. The events bucket is kept on delete
// (keepExceptOnCreate) and emptied by the documented teardown; results
// expire after resultsDays.
const (
	resultsPrefix = "athena-results/"
	resultsDays   = 30
)

func bucket(component string, expire map[string]int) map[string]any {
	p := map[string]any{
		"PublicAccessBlockConfiguration": map[string]any{
			"BlockPublicAcls": true, "BlockPublicPolicy": true, "IgnorePublicAcls": true, "RestrictPublicBuckets": true,
		},
		"BucketEncryption": map[string]any{"ServerSideEncryptionConfiguration": []any{
			map[string]any{"ServerSideEncryptionByDefault": map[string]any{"SSEAlgorithm": "AES256"}},
		}},
		"Tags": tags(component),
	}
	var rules []any
	for _, prefix := range slices.Sorted(maps.Keys(expire)) {
		rules = append(rules, map[string]any{
			"Id": "expire-" + strings.Trim(prefix, "/"), "Status": "Enabled", "Prefix": prefix, "ExpirationInDays": expire[prefix],
		})
	}
	if len(rules) > 0 {
		p["LifecycleConfiguration"] = map[string]any{"Rules": rules}
	}
	return p
}

func (s *Spec) analytics(t *Template) error {
	a := s.Analytics
	g, err := ParseDDL(a.DDL)
	if err != nil {
		return err
	}
	t.add(idEventBus, Resource{Type: "AWS::Events::EventBus", Properties: map[string]any{"Name": Sub("pacer-${Stage}")}})
	t.add(idEventsBucket, Resource{Type: "AWS::S3::Bucket", Properties: bucket("analytics", map[string]int{resultsPrefix: resultsDays}),
		DeletionPolicy: keepExceptOnCreate, UpdateReplacePolicy: keepOnReplace})
	bucketPolicy(t, idEventsBucket+"Policy", idEventsBucket, "")

	firehose(t, a)
	s.eventsRule(t, a)
	glueAthena(t, a, g)
	return nil
}

// firehose adds the Firehose delivery stream that writes the events, one
// per line, to the events bucket, and its role.
func firehose(t *Template, a Analytics) {
	// Firehose writes to the events bucket only.
	t.add(idFirehoseRole, Resource{Type: "AWS::IAM::Role", Properties: map[string]any{
		"AssumeRolePolicyDocument": assumeRole("firehose.amazonaws.com"),
		"Policies": inlinePolicy("s3", map[string]any{"Version": "2012-10-17", "Statement": []any{
			map[string]any{"Effect": "Allow", "Action": []string{"s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"},
				"Resource": []any{GetAtt(idEventsBucket, "Arn")}},
			// AbortMultipartUpload is authorized on the object, not the bucket.
			map[string]any{"Effect": "Allow", "Action": []string{"s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"},
				"Resource": []any{Sub("${" + idEventsBucket + ".Arn}/*")}},
		}}),
	}})
	t.add(idFirehose, Resource{Type: "AWS::KinesisFirehose::DeliveryStream", Properties: map[string]any{
		"DeliveryStreamName": Sub("pacer-${Stage}-events"), "DeliveryStreamType": "DirectPut",
		"ExtendedS3DestinationConfiguration": map[string]any{
			"BucketARN": GetAtt(idEventsBucket, "Arn"), "RoleARN": GetAtt(idFirehoseRole, "Arn"),
			"Prefix": a.Prefix, "ErrorOutputPrefix": a.ErrorPrefix,
			"BufferingHints": map[string]any{
				"SizeInMBs": a.BufferBytes >> 20, "IntervalInSeconds": int(a.BufferInterval / time.Second),
			},
			"CompressionFormat": "UNCOMPRESSED",
			// One event per line: without the delimiter Firehose
			// concatenates the JSON objects.
			"ProcessingConfiguration": map[string]any{"Enabled": true, "Processors": []any{
				map[string]any{"Type": "AppendDelimiterToRecord"},
			}},
		},
	}})
}

// eventsRule adds the EventBridge rule that sends the analytics events to
// Firehose, its role and the DLQ of its failed deliveries.
func (s *Spec) eventsRule(t *Template, a Analytics) {
	// The rule sends the whole event to Firehose; failed deliveries go to
	// a DLQ after EventBridge's maximum retries.
	t.add(idRuleDLQ, Resource{Type: "AWS::SQS::Queue", Properties: map[string]any{
		"QueueName": Sub("pacer-${Stage}-events-rule-dlq"), "MessageRetentionPeriod": int(s.Queue.DLQRetention / time.Second), "Tags": tags("analytics"),
	}})
	t.add(idRuleDLQ+"Policy", Resource{Type: "AWS::SQS::QueuePolicy", Properties: map[string]any{
		"Queues": []any{Ref(idRuleDLQ)},
		"PolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
			"Effect": "Allow", "Principal": map[string]any{"Service": "events.amazonaws.com"}, "Action": "sqs:SendMessage",
			"Resource": GetAtt(idRuleDLQ, "Arn"), "Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": GetAtt("EventsRule", "Arn")}},
		}}},
	}})
	t.add(idRuleRole, Resource{Type: "AWS::IAM::Role", Properties: map[string]any{
		"AssumeRolePolicyDocument": assumeRole("events.amazonaws.com"),
		"Policies": inlinePolicy("firehose", map[string]any{"Version": "2012-10-17", "Statement": []any{
			map[string]any{"Effect": "Allow", "Action": []string{"firehose:PutRecord", "firehose:PutRecordBatch"}, "Resource": []any{GetAtt(idFirehose, "Arn")}},
		}}),
	}})
	t.add("EventsRule", Resource{Type: "AWS::Events::Rule", Properties: map[string]any{
		"Name": Sub("pacer-${Stage}-events-to-firehose"), "EventBusName": Ref(idEventBus), "State": "ENABLED",
		"EventPattern": map[string]any{"source": []string{a.Source}, "detail-type": a.DetailTypes},
		"Targets": []any{map[string]any{
			"Id": "firehose", "Arn": GetAtt(idFirehose, "Arn"), "RoleArn": GetAtt(idRuleRole, "Arn"),
			"DeadLetterConfig": map[string]any{"Arn": GetAtt(idRuleDLQ, "Arn")},
			"RetryPolicy":      map[string]any{"MaximumRetryAttempts": 185, "MaximumEventAgeInSeconds": 86400},
		}},
	}})
}

// glueAthena adds the Glue database and table of the DDL g, the Athena
// workgroup and a named query for each of a's queries.
func glueAthena(t *Template, a Analytics, g GlueTable) {
	// Glue table and Athena workgroup, from the DDL.
	t.add(idGlueDB, Resource{Type: "AWS::Glue::Database", Properties: map[string]any{
		"CatalogId":     Ref("AWS::AccountId"),
		"DatabaseInput": map[string]any{"Name": Sub("pacer_${Stage}"), "Description": "Pacer analytics events (docs/events.md)"},
	}})
	cols := func(cs [][2]string) []any {
		var out []any
		for _, c := range cs {
			out = append(out, map[string]any{"Name": c[0], "Type": c[1]})
		}
		return out
	}
	params := map[string]any{"EXTERNAL": "TRUE", "classification": "json"}
	for k, v := range g.Properties {
		params[k] = withBucket(v)
	}
	serde := map[string]any{}
	for k, v := range g.SerDeParams {
		serde[k] = v
	}
	t.add("EventsTable", Resource{Type: "AWS::Glue::Table", Properties: map[string]any{
		"CatalogId": Ref("AWS::AccountId"), "DatabaseName": Ref(idGlueDB),
		"TableInput": map[string]any{
			"Name": g.Name, "TableType": "EXTERNAL_TABLE", "Parameters": params, "PartitionKeys": cols(g.PartitionKeys),
			"StorageDescriptor": map[string]any{
				"Columns": cols(g.Columns), "Location": withBucket(g.Location),
				"InputFormat":  "org.apache.hadoop.mapred.TextInputFormat",
				"OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
				"SerdeInfo":    map[string]any{"SerializationLibrary": g.SerDe, "Parameters": serde},
			},
		},
	}})
	t.add(idWorkgroup, Resource{Type: "AWS::Athena::WorkGroup", Properties: map[string]any{
		"Name": Sub("pacer-${Stage}"), "State": "ENABLED", "RecursiveDeleteOption": true,
		"WorkGroupConfiguration": map[string]any{
			"EnforceWorkGroupConfiguration": true, "BytesScannedCutoffPerQuery": a.ScanLimitBytes,
			"ResultConfiguration": map[string]any{"OutputLocation": Sub("s3://${" + idEventsBucket + "}/" + resultsPrefix)},
		},
	}})
	names := make([]string, 0, len(a.Queries))
	for n := range a.Queries {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		t.add("AnalyticsQuery"+strconv.Itoa(i+1), Resource{Type: "AWS::Athena::NamedQuery", DependsOn: []string{"EventsTable"}, Properties: map[string]any{
			"Name": strings.TrimSuffix(n, ".sql"), "Database": Ref(idGlueDB), "WorkGroup": Ref(idWorkgroup),
			"Description": "analytics/queries/" + n, "QueryString": a.Queries[n],
		}})
	}
}
