package stack_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/internal/repo"
)

// readTemplateNumbers reads the committed template, numbers as
// json.Number (the spec check tells integers from other numbers).
func readTemplateNumbers(t *testing.T) map[string]any { return decodeTemplate(t, true) }

// decodeTemplate reads the committed template; numbers as json.Number
// when numbers is set, else as float64.
func decodeTemplate(t *testing.T, numbers bool) map[string]any {
	t.Helper()
	b, err := repo.ReadFile("deploy", "aws", "pacer.template.json")
	if err != nil {
		t.Fatal(err)
	}
	var tpl map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	if numbers {
		dec.UseNumber()
	}
	if err := dec.Decode(&tpl); err != nil {
		t.Fatal(err)
	}
	return tpl
}

// The committed template is what CloudFormation's resource specification
// allows (see checkTemplate); make deploy-lint runs this.
func TestTemplateAgainstResourceSpec(t *testing.T) {
	spec := loadResourceSpec(t)
	tpl := readTemplateNumbers(t)
	for _, f := range checkTemplate(spec, tpl) {
		t.Error(f)
	}
}

// firstOf returns the logical id and properties of the template's first
// resource (by id) of type typ, failing the test when it has none.
func firstOf(t *testing.T, tpl map[string]any, typ string) (string, map[string]any) {
	t.Helper()
	res := tpl["Resources"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(res)) {
		if r := res[id].(map[string]any); r["Type"] == typ {
			return id, r["Properties"].(map[string]any)
		}
	}
	t.Fatalf("the template has no %s to change", typ)
	return "", nil
}

// mutation is a change made to a copy of the committed template.
type mutation func(t *testing.T, tpl map[string]any)

// set sets a property of the first resource of type typ to v's value.
func set(typ, prop string, v func(t *testing.T, tpl map[string]any) any) mutation {
	return func(t *testing.T, tpl map[string]any) {
		_, props := firstOf(t, tpl, typ)
		props[prop] = v(t, tpl)
	}
}

// is is a value that does not depend on the template.
func is(v any) func(*testing.T, map[string]any) any {
	return func(*testing.T, map[string]any) any { return v }
}

// The check finds each kind of mistake, made in a copy of the committed
// template.
func TestTemplateCheckRefusesMistakes(t *testing.T) {
	spec := loadResourceSpec(t)
	const (
		queue = "AWS::SQS::Queue"
		table = "AWS::DynamoDB::Table"
		task  = "AWS::ECS::TaskDefinition"
	)
	queueID := func(t *testing.T, tpl map[string]any) string { id, _ := firstOf(t, tpl, queue); return id }
	for _, c := range []struct {
		name   string
		mutate mutation
		want   string
	}{
		{"unknown property", set(queue, "VisibilityTimeOut", is(json.Number("30"))), "unknown property VisibilityTimeOut"},
		{"unknown nested property", func(t *testing.T, tpl map[string]any) {
			_, props := firstOf(t, tpl, task)
			props["ContainerDefinitions"].([]any)[0].(map[string]any)["Imagee"] = "x"
		}, "ContainerDefinitions[0]: unknown property Imagee"},
		{"unknown resource type", func(t *testing.T, tpl map[string]any) {
			id, _ := firstOf(t, tpl, queue)
			tpl["Resources"].(map[string]any)[id].(map[string]any)["Type"] = "AWS::SQS::Queues"
		}, "resource type AWS::SQS::Queues is not in"},
		{"list for a string", set(queue, "QueueName", is([]any{"a"})), `.QueueName: ["a"] is not a string`},
		{"boolean for an integer", set(queue, "VisibilityTimeout", is(true)), ".VisibilityTimeout: true is not an integer"},
		{"string not among the allowed values", set("AWS::ECS::Service", "LaunchType", is("FARGATEE")), `.LaunchType: "FARGATEE" is not one of`},
		{"integer not among the allowed values", set("AWS::Logs::LogGroup", "RetentionInDays", is(json.Number("31"))), ".RetentionInDays: 31 is not one of"},
		{"string for a list", set(task, "ContainerDefinitions", is("x")), `.ContainerDefinitions: "x" is not a list`},
		{"string-valued function for a list", set(task, "ContainerDefinitions", is(map[string]any{"Fn::Join": []any{",", []any{"a"}}})),
			"Fn::Join produces a string, not a list of ContainerDefinition"},
		{"wrong type in an Fn::If branch", set(queue, "VisibilityTimeout", func(t *testing.T, tpl map[string]any) any {
			cond := slices.Sorted(maps.Keys(tpl["Conditions"].(map[string]any)))[0]
			return map[string]any{"Fn::If": []any{cond, "soon", map[string]any{"Ref": "AWS::NoValue"}}}
		}), `"soon" is not an integer`},
		{"missing required property", func(t *testing.T, tpl map[string]any) {
			_, props := firstOf(t, tpl, table)
			delete(props, "KeySchema")
		}, "required property KeySchema (of AWS::DynamoDB::Table) is missing"},
		{"missing required nested property", func(t *testing.T, tpl map[string]any) {
			_, props := firstOf(t, tpl, task)
			delete(props["ContainerDefinitions"].([]any)[0].(map[string]any), "Image")
		}, "required property Image (of ContainerDefinition) is missing"},
		{"Ref to nothing", set(queue, "QueueName", is(map[string]any{"Ref": "NoSuchParameter"})), "Ref NoSuchParameter names no parameter"},
		{"GetAtt of no resource", set(queue, "QueueName", is(map[string]any{"Fn::GetAtt": []any{"NoSuchQueue", "QueueName"}})),
			"Fn::GetAtt NoSuchQueue.QueueName names no resource"},
		{"GetAtt of an attribute the type lacks", set(table, "TableName", func(t *testing.T, tpl map[string]any) any {
			return map[string]any{"Fn::GetAtt": []any{queueID(t, tpl), "Url"}}
		}), "AWS::SQS::Queue has no attribute Url"},
		{"Sub of nothing", set(queue, "QueueName", is(map[string]any{"Fn::Sub": "q-${NoSuchStage}"})), "Fn::Sub ${NoSuchStage} names no parameter"},
		{"Sub of an attribute the type lacks", set(table, "TableName", func(t *testing.T, tpl map[string]any) any {
			return map[string]any{"Fn::Sub": "${" + queueID(t, tpl) + ".Url}"}
		}), ".Url}: AWS::SQS::Queue has no attribute Url"},
		{"Fn::If on no condition", set(queue, "QueueName", is(map[string]any{"Fn::If": []any{"NoSuchCondition", "a", "b"}})),
			"Condition NoSuchCondition names no condition"},
		{"resource on no condition", func(t *testing.T, tpl map[string]any) {
			tpl["Resources"].(map[string]any)[queueID(t, tpl)].(map[string]any)["Condition"] = "NoSuchCondition"
		}, "Condition NoSuchCondition names no condition"},
		{"condition on a resource", func(t *testing.T, tpl map[string]any) {
			tpl["Conditions"].(map[string]any)["OnAResource"] = map[string]any{"Fn::Equals": []any{map[string]any{"Ref": queueID(t, tpl)}, ""}}
		}, "a condition can only Ref a parameter"},
		{"DependsOn nothing", func(t *testing.T, tpl map[string]any) {
			tpl["Resources"].(map[string]any)[queueID(t, tpl)].(map[string]any)["DependsOn"] = "NoSuchResource"
		}, "DependsOn NoSuchResource names no resource"},
		{"unknown function", set(queue, "QueueName", is(map[string]any{"Fn::Concat": []any{"a", "b"}})), "Fn::Concat is not a CloudFormation function"},
		{"RetainExceptOnCreate on replacement", func(t *testing.T, tpl map[string]any) {
			id, _ := firstOf(t, tpl, table)
			tpl["Resources"].(map[string]any)[id].(map[string]any)["UpdateReplacePolicy"] = "RetainExceptOnCreate"
		}, "UpdateReplacePolicy RetainExceptOnCreate is not one of Delete, Retain, Snapshot"},
		{"unknown deletion policy", func(t *testing.T, tpl map[string]any) {
			id, _ := firstOf(t, tpl, table)
			tpl["Resources"].(map[string]any)[id].(map[string]any)["DeletionPolicy"] = "Keep"
		}, "DeletionPolicy Keep is not one of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tpl := readTemplateNumbers(t)
			c.mutate(t, tpl)
			found := checkTemplate(spec, tpl)
			for _, f := range found {
				if strings.Contains(f, c.want) {
					return
				}
			}
			t.Errorf("no finding contains %q; found:\n%s", c.want, strings.Join(found, "\n"))
		})
	}
}

// What the template may grow is accepted: an optional TLS listener with a
// certificate and a redirect from HTTP, a property that exists only under
// a condition (Fn::If with AWS::NoValue), a task's RuntimePlatform, and
// the other forms of Fn::GetAtt and Fn::Sub.
func TestTemplateCheckAcceptsValidAdditions(t *testing.T) {
	spec := loadResourceSpec(t)
	tpl := readTemplateNumbers(t)
	res := tpl["Resources"].(map[string]any)
	var lb, tg, queue string
	for _, c := range []struct {
		id  *string
		typ string
	}{{&lb, "AWS::ElasticLoadBalancingV2::LoadBalancer"}, {&tg, "AWS::ElasticLoadBalancingV2::TargetGroup"}, {&queue, "AWS::SQS::Queue"}} {
		*c.id, _ = firstOf(t, tpl, c.typ)
	}
	ref := func(name string) map[string]any { return map[string]any{"Ref": name} }
	tpl["Parameters"].(map[string]any)["CertificateArn"] = map[string]any{"Type": "String", "Default": ""}
	tpl["Conditions"].(map[string]any)["HasCertificate"] = map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("CertificateArn"), ""}}}}
	res["HttpsListener"] = map[string]any{"Type": "AWS::ElasticLoadBalancingV2::Listener", "Condition": "HasCertificate", "Properties": map[string]any{
		"LoadBalancerArn": ref(lb), "Port": json.Number("443"), "Protocol": "HTTPS", "SslPolicy": "ELBSecurityPolicy-TLS13-1-2-2021-06",
		"Certificates":   []any{map[string]any{"CertificateArn": ref("CertificateArn")}},
		"DefaultActions": []any{map[string]any{"Type": "forward", "TargetGroupArn": ref(tg)}},
	}}
	res["HttpRedirect"] = map[string]any{"Type": "AWS::ElasticLoadBalancingV2::ListenerRule", "Properties": map[string]any{
		"ListenerArn": map[string]any{"Fn::GetAtt": "HttpsListener.ListenerArn"}, "Priority": json.Number("1"),
		"Conditions": []any{map[string]any{"Field": "path-pattern", "PathPatternConfig": map[string]any{"Values": []any{"/*"}}}},
		"Actions": []any{map[string]any{"Type": "redirect", "RedirectConfig": map[string]any{
			"Protocol": "HTTPS", "Port": "443", "StatusCode": "HTTP_301",
			"Host": map[string]any{"Fn::If": []any{"HasCertificate", "#{host}", ref("AWS::NoValue")}},
		}}},
	}}
	_, task := firstOf(t, tpl, "AWS::ECS::TaskDefinition")
	task["RuntimePlatform"] = map[string]any{"CpuArchitecture": "ARM64", "OperatingSystemFamily": "LINUX"}
	_, q := firstOf(t, tpl, "AWS::SQS::Queue")
	q["KmsMasterKeyId"] = map[string]any{"Fn::If": []any{"HasCertificate", "alias/aws/sqs", ref("AWS::NoValue")}}
	q["Tags"] = []any{map[string]any{"Key": "url", "Value": map[string]any{"Fn::Sub": []any{"${Q}-${" + queue + ".QueueUrl}-${!Literal}", map[string]any{"Q": "x"}}}}}
	for _, f := range checkTemplate(spec, tpl) {
		t.Error(f)
	}
}
