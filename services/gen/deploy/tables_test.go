package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/pacerhq/pacer/deploy/stack"
	"github.com/pacerhq/pacer/internal/repo"
	asyncstore "github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// committedTemplate reads the committed template as plain JSON.
// repoRoot is the repository's root, where Build and the committed
// deployment are read from.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func committedTemplate(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "aws", "pacer.template.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

func resources(tpl map[string]any, typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range tpl["Resources"].(map[string]any) {
		if r := r.(map[string]any); r["Type"] == typ {
			out[id] = r["Properties"].(map[string]any)
		}
	}
	return out
}

// createTableFromTemplate turns an AWS::DynamoDB::Table's properties into
// the CreateTable request CloudFormation would send.
func createTableFromTemplate(name string, p map[string]any) *dynamodb.CreateTableInput {
	keys := func(v any) []types.KeySchemaElement {
		var out []types.KeySchemaElement
		for _, k := range v.([]any) {
			k := k.(map[string]any)
			out = append(out, types.KeySchemaElement{AttributeName: aws.String(k["AttributeName"].(string)), KeyType: types.KeyType(k["KeyType"].(string))})
		}
		return out
	}
	in := &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: keys(p["KeySchema"]), BillingMode: types.BillingMode(p["BillingMode"].(string))}
	for _, d := range p["AttributeDefinitions"].([]any) {
		d := d.(map[string]any)
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(d["AttributeName"].(string)), AttributeType: types.ScalarAttributeType(d["AttributeType"].(string))})
	}
	if gs, ok := p["GlobalSecondaryIndexes"].([]any); ok {
		for _, g := range gs {
			g := g.(map[string]any)
			proj := g["Projection"].(map[string]any)
			pr := &types.Projection{ProjectionType: types.ProjectionType(proj["ProjectionType"].(string))}
			if nk, ok := proj["NonKeyAttributes"].([]any); ok {
				for _, a := range nk {
					pr.NonKeyAttributes = append(pr.NonKeyAttributes, a.(string))
				}
			}
			in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
				IndexName: aws.String(g["IndexName"].(string)), KeySchema: keys(g["KeySchema"]), Projection: pr})
		}
	}
	if s, ok := p["StreamSpecification"].(map[string]any); ok {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(s["StreamViewType"].(string))}
	}
	return in
}

// tableShape is what DescribeTable and DescribeTimeToLive say about a
// table's structure, in a comparable form.
type tableShape struct {
	Keys, Attrs, Billing, Stream, TTL string
	Indexes                           []string
}

func describe(ctx context.Context, t *testing.T, c *dynamodb.Client, name string) tableShape {
	t.Helper()
	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Table
	keys := func(ks []types.KeySchemaElement) string {
		s := ""
		for _, k := range ks {
			s += aws.ToString(k.AttributeName) + ":" + string(k.KeyType) + " "
		}
		return s
	}
	var attrs []string
	for _, a := range d.AttributeDefinitions {
		attrs = append(attrs, aws.ToString(a.AttributeName)+":"+string(a.AttributeType))
	}
	sort.Strings(attrs)
	sh := tableShape{Keys: keys(d.KeySchema), Attrs: fmt.Sprint(attrs)}
	if d.BillingModeSummary != nil {
		sh.Billing = string(d.BillingModeSummary.BillingMode)
	}
	if s := d.StreamSpecification; s != nil && aws.ToBool(s.StreamEnabled) {
		sh.Stream = string(s.StreamViewType)
	}
	for _, g := range d.GlobalSecondaryIndexes {
		sh.Indexes = append(sh.Indexes, fmt.Sprintf("%s %s%s %v", aws.ToString(g.IndexName), keys(g.KeySchema), g.Projection.ProjectionType, g.Projection.NonKeyAttributes))
	}
	sort.Strings(sh.Indexes)
	ttl, err := c.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	if x := ttl.TimeToLiveDescription; x != nil && (x.TimeToLiveStatus == types.TimeToLiveStatusEnabled || x.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		sh.TTL = aws.ToString(x.AttributeName)
	}
	return sh
}

// TestTemplateTablesMatchEnsure creates every table of the committed
// template on DynamoDB Local as CloudFormation would (CreateTable from its
// properties, then its TimeToLiveSpecification), and the same table with
// the schema's own Ensure, and compares the two with DescribeTable and
// DescribeTimeToLive: keys, attribute definitions, billing, indexes and
// their projections, stream and TTL must match, with no exception: every
// table's stream is its schema's (the PhotoService table's too, issue 46).
func TestTemplateTablesMatchEnsure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := awsclient.DynamoDB(cfg)
	db := ddb.New(c, ddb.Config{})
	tables := resources(committedTemplate(t), "AWS::DynamoDB::Table")
	if len(tables) != len(spec.Tables) {
		t.Fatalf("the template has %d tables, the spec %d", len(tables), len(spec.Tables))
	}
	suffix := strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	for _, tb := range spec.Tables {
		props, ok := tables[tb.ID]
		if !ok {
			t.Fatalf("the template has no table %s", tb.ID)
		}
		fromTemplate, fromEnsure := tb.ID+"-cfn-"+suffix, tb.ID+"-ensure-"+suffix
		if _, err := c.CreateTable(ctx, createTableFromTemplate(fromTemplate, props)); err != nil {
			t.Fatalf("%s: CreateTable from the template: %v", tb.ID, err)
		}
		if ttl, ok := props["TimeToLiveSpecification"].(map[string]any); ok && ttl["Enabled"] == true {
			if _, err := c.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(fromTemplate),
				TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(ttl["AttributeName"].(string)), Enabled: aws.Bool(true)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Table(fromEnsure, tb.Schema).Ensure(ctx); err != nil {
			t.Fatalf("%s: Ensure: %v", tb.ID, err)
		}
		got, want := describe(ctx, t, c, fromTemplate), describe(ctx, t, c, fromEnsure)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the template's table differs from Ensure's:\ntemplate %+v\nEnsure   %+v", tb.ID, got, want)
		}
		if len(want.Indexes) != len(tb.Schema.Indexes) || want.Keys == "" {
			t.Errorf("%s: Ensure's table looks empty: %+v", tb.ID, want)
		}
	}
}

// TestTemplateQueuesMatchEnsure creates the template's queue and DLQ on
// the local SQS as CloudFormation would and the same pair with
// sqsqueue.Open's Ensure, and compares their attributes: visibility
// timeout, retention and the redrive policy (maxReceiveCount, pointing at
// the DLQ).
func TestTemplateQueuesMatchEnsure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := awsclient.SQS(cfg)
	qs := resources(committedTemplate(t), "AWS::SQS::Queue")
	mainQ, dlq := qs[stack.IDQueue], qs[stack.IDDLQ]
	if mainQ == nil || dlq == nil {
		t.Fatal("the template has no participation queue or DLQ")
	}
	name := fmt.Sprintf("cfn-%d", time.Now().UnixNano()%1e9)
	attrs := func(p map[string]any, dlqARN string) map[string]string {
		out := map[string]string{}
		for k, v := range p {
			switch k {
			case "QueueName", "Tags":
			case "RedrivePolicy":
				rp := v.(map[string]any)
				b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": rp["maxReceiveCount"]})
				out[k] = string(b)
			default:
				out[k] = fmt.Sprint(v)
			}
		}
		return out
	}
	create := func(n string, a map[string]string) string {
		out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(n), Attributes: a})
		if err != nil {
			t.Fatalf("CreateQueue %s %v: %v", n, a, err)
		}
		return aws.ToString(out.QueueUrl)
	}
	get := func(url string) map[string]string {
		out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		a := out.Attributes
		keep := map[string]string{"VisibilityTimeout": a["VisibilityTimeout"], "MessageRetentionPeriod": a["MessageRetentionPeriod"]}
		if rp := a["RedrivePolicy"]; rp != "" {
			var p struct {
				Target string `json:"deadLetterTargetArn"`
				Max    any    `json:"maxReceiveCount"`
			}
			if err := json.Unmarshal([]byte(rp), &p); err != nil {
				t.Fatal(err)
			}
			keep["maxReceiveCount"], keep["target"] = fmt.Sprint(p.Max), p.Target[len(p.Target)-4:] // "-dlq"
		}
		return keep
	}
	dlqURL := create(name+"-dlq", attrs(dlq, ""))
	arn, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dlqURL), AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	if err != nil {
		t.Fatal(err)
	}
	mainURL := create(name, attrs(mainQ, arn.Attributes["QueueArn"]))

	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqsqueue.Open(ctx, c, sqsqueue.Config{Name: "ensure-" + name, MaxReceives: spec.Queue.MaxReceives, Ensure: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{mainURL, q.URL()}, {dlqURL, q.DLQURL()}} {
		got, want := get(pair[0]), get(pair[1])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the template's queue differs from Ensure's:\ntemplate %v\nEnsure   %v", pair[1], got, want)
		}
	}
}

// TestRecoveryAndEncryptionAreTheDeployments pins the decision of
// docs/contract.md ("PITR and encryption"): the seed's PhotoService table
// has point-in-time recovery and AWS-managed encryption, and so do both of
// the template's data tables, while the schemas declare neither (a table
// Ensure makes has DynamoDB's default encryption and no PITR).
func TestRecoveryAndEncryptionAreTheDeployments(t *testing.T) {
	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	tables := resources(committedTemplate(t), "AWS::DynamoDB::Table")
	for _, id := range []string{stack.IDAsyncTable, stack.IDPhotoTable} {
		p := tables[id]
		if p == nil {
			t.Fatalf("the template has no table %s", id)
		}
		if pitr, _ := p["PointInTimeRecoverySpecification"].(map[string]any); pitr["PointInTimeRecoveryEnabled"] != true {
			t.Errorf("%s: PointInTimeRecoverySpecification %v, want enabled", id, p["PointInTimeRecoverySpecification"])
		}
		if sse, _ := p["SSESpecification"].(map[string]any); sse["SSEEnabled"] != true || sse["SSEType"] != "KMS" {
			t.Errorf("%s: SSESpecification %v, want KMS", id, p["SSESpecification"])
		}
	}
	for _, tb := range spec.Tables {
		if in := tb.Schema.CreateTableInput("t"); in.SSESpecification != nil {
			t.Errorf("%s: the schema's CreateTable sets SSESpecification %+v: docs/contract.md says encryption is the deployment's", tb.ID, in.SSESpecification)
		}
	}
}

// TestTableNamesAreTheSeedsWithTheStage pins docs/contract.md's row on
// table names: the code's default AsyncEvent table is the seed's
// AsyncEventTable, and the template names each stage's tables as the
// photo seed does, PhotoService-{stage}, with AsyncEventTable-{stage}
// beside it.
func TestTableNamesAreTheSeedsWithTheStage(t *testing.T) {
	if asyncstore.DefaultTable != "AsyncEventTable" {
		t.Errorf("the default AsyncEvent table is %q, the seed's is AsyncEventTable", asyncstore.DefaultTable)
	}
	tpl := committedTemplate(t)["Resources"].(map[string]any)
	for id, want := range map[string]string{stack.IDAsyncTable: "AsyncEventTable-${Stage}", stack.IDPhotoTable: "PhotoService-${Stage}"} {
		name := tpl[id].(map[string]any)["Properties"].(map[string]any)["TableName"]
		if got, _ := name.(map[string]any)["Fn::Sub"].(string); got != want {
			t.Errorf("%s is named %v, want %s", id, name, want)
		}
	}
}
