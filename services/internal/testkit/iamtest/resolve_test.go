package iamtest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/internal/repo"
)

var testARNs = ARNs{Region: "us-east-1", Account: "000000000000"}

func testRefs() map[string]string {
	a := testARNs
	return map[string]string{
		"AsyncEventTable.Arn":       a.Table("events"),
		"AsyncEventTable.StreamArn": a.Stream("events"),
		"ParticipationQueue.Arn":    a.Queue("q"),
		"AWS::Region":               a.Region,
		"AWS::AccountId":            a.Account,
		"Prefix":                    "pacer",
	}
}

func TestResolvePolicy(t *testing.T) {
	a := testARNs
	cases := []struct {
		name     string
		resource any
		want     string // a resource the resolved policy allows
		not      string // and one it does not
	}{
		{"GetAtt", map[string]any{"Fn::GetAtt": []any{"AsyncEventTable", "Arn"}}, a.Table("events"), a.Index("events", "GSI1")},
		{"GetAtt string form", map[string]any{"Fn::GetAtt": "AsyncEventTable.StreamArn"}, a.Stream("events"), a.Table("events")},
		{"Sub with an attribute", map[string]any{"Fn::Sub": "${AsyncEventTable.Arn}/index/*"}, a.Index("events", "GSI1"), a.Table("events")},
		{"Sub with pseudo parameters", map[string]any{"Fn::Sub": "arn:aws:sqs:${AWS::Region}:${AWS::AccountId}:${Prefix}-*"}, a.Queue("pacer-q"), a.Queue("other")},
		{"Sub list form", map[string]any{"Fn::Sub": []any{"arn:aws:sqs:${AWS::Region}:${AWS::AccountId}:${Name}", map[string]any{"Name": map[string]any{"Ref": "Prefix"}}}}, a.Queue("pacer"), a.Queue("q")},
		{"Ref", map[string]any{"Fn::Join": []any{"", []any{"arn:aws:sqs:", map[string]any{"Ref": "AWS::Region"}, ":", map[string]any{"Ref": "AWS::AccountId"}, ":q"}}}, a.Queue("q"), a.Queue("r")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := map[string]any{"Statement": []any{allow("sqs:SendMessage", []any{c.resource})}}
			p, err := ResolvePolicy(doc, testRefs())
			if err != nil {
				t.Fatalf("ResolvePolicy: %v", err)
			}
			if !p.Allows("sqs:SendMessage", c.want) {
				t.Errorf("denies %s; policy:\n%s", c.want, p)
			}
			if p.Allows("sqs:SendMessage", c.not) {
				t.Errorf("allows %s; policy:\n%s", c.not, p)
			}
		})
	}
}

// ${!Name} in a Sub is the literal ${Name}.
func TestSubEscape(t *testing.T) {
	got, err := sub("${!Literal}-${Prefix}", testRefs())
	if want := "${Literal}-pacer"; err != nil || got != want {
		t.Errorf("sub = %q, %v; want %q", got, err, want)
	}
	// The literal is an IAM policy variable, which ParsePolicy refuses.
	doc := map[string]any{"Statement": allow("sqs:SendMessage", map[string]any{"Fn::Sub": "arn:aws:sqs:::${!aws:username}"})}
	if _, err := ResolvePolicy(doc, testRefs()); !errors.Is(err, ErrPolicy) {
		t.Errorf("ResolvePolicy of a policy variable = %v, want an ErrPolicy", err)
	}
}

func TestResolvePolicyRefuses(t *testing.T) {
	cases := map[string]struct {
		resource any
		names    string // what the error must name
	}{
		"unknown GetAtt":         {map[string]any{"Fn::GetAtt": []any{"PhotoTable", "Arn"}}, "PhotoTable.Arn"},
		"unknown Sub reference":  {map[string]any{"Fn::Sub": "${PhotoTable.Arn}/index/*"}, "PhotoTable.Arn"},
		"unknown pseudo":         {map[string]any{"Fn::Sub": "arn:aws:sqs:${AWS::Partition}:q"}, "AWS::Partition"},
		"unknown Ref":            {map[string]any{"Ref": "Nope"}, "Nope"},
		"unsupported intrinsic":  {map[string]any{"Fn::If": []any{"C", "a", "b"}}, "Fn::If"},
		"malformed GetAtt":       {map[string]any{"Fn::GetAtt": []any{"AsyncEventTable"}}, "Fn::GetAtt"},
		"unclosed Sub reference": {map[string]any{"Fn::Sub": "${AsyncEventTable.Arn"}, "unclosed"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			doc := map[string]any{"Statement": allow("sqs:SendMessage", c.resource)}
			_, err := ResolvePolicy(doc, testRefs())
			if !errors.Is(err, ErrPolicy) || !strings.Contains(err.Error(), c.names) {
				t.Errorf("ResolvePolicy = %v, want an ErrPolicy naming %q", err, c.names)
			}
		})
	}
}

// Every task role of the generated template resolves with its tables',
// queues' and bus's refs, and grants what it should.
func TestResolveTemplateTaskRoles(t *testing.T) {
	raw, err := repo.ReadFile("deploy", "aws", "pacer.template.json")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct{ Resources map[string]json.RawMessage }
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		t.Fatal(err)
	}
	docs := map[string]any{} // task role → its policy document
	for id, r := range tmpl.Resources {
		if !strings.HasSuffix(id, "TaskRole") {
			continue
		}
		var role struct {
			Properties struct {
				Policies []struct{ PolicyDocument any }
			}
		}
		if err := json.Unmarshal(r, &role); err != nil || len(role.Properties.Policies) == 0 {
			t.Fatalf("%s: %v, %d policies", id, err, len(role.Properties.Policies))
		}
		docs[id] = role.Properties.Policies[0].PolicyDocument
	}
	a := testARNs
	refs := map[string]string{}
	for id, name := range map[string]string{"AsyncEventTable": "events", "PhotoTable": "photos", "CheckpointTable": "checkpoints", "ReplicasTable": "replicas"} {
		refs[id+".Arn"], refs[id+".StreamArn"] = a.Table(name), a.Stream(name)
	}
	refs["ParticipationQueue.Arn"], refs["ParticipationDLQ.Arn"], refs["EventBus.Arn"] = a.Queue("q"), a.Queue("dlq"), a.Bus("pacer")
	refs["AWS::Partition"], refs["PhotoBucket"] = "aws", "race-photos" // photo-api's originals (s3:GetObject)
	for id, doc := range docs {
		if _, err := ResolvePolicy(doc, refs); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if len(docs) < 4 {
		t.Errorf("%d task roles in the template, want 4 at least", len(docs))
	}
	p, err := ResolvePolicy(docs["WorkerTaskRole"], refs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		action, resource string
		want             bool
	}{
		{"dynamodb:Query", a.Index("events", "GSI1"), true},
		{"dynamodb:PutItem", a.Table("events"), true},
		{"dynamodb:DeleteItem", a.Table("events"), false},
		{"dynamodb:PutItem", a.Table("photos"), false},
		{"sqs:ReceiveMessage", a.Queue("q"), true},
		{"sqs:ReceiveMessage", a.Queue("dlq"), false},
	} {
		if got := p.Allows(c.action, c.resource); got != c.want {
			t.Errorf("WorkerTaskRole allows %s on %s: %v, want %v", c.action, c.resource, got, c.want)
		}
	}
	photo, err := ResolvePolicy(docs["PhotoApiTaskRole"], refs)
	if err != nil {
		t.Fatal(err)
	}
	// The APIs count their replicas (the rate limits' shares) in their
	// own table, and may do nothing else there.
	if !photo.Allows("dynamodb:Query", a.Table("replicas")) || photo.Allows("dynamodb:DeleteItem", a.Table("replicas")) || p.Allows("dynamodb:PutItem", a.Table("replicas")) {
		t.Error("the replicas table: want photo-api's Query, no DeleteItem, and nothing of the worker's")
	}
	if !photo.Allows("s3:GetObject", a.Object("race-photos", "o/e/raw/1.jpg")) || photo.Allows("s3:GetObject", a.Object("other", "o/e/raw/1.jpg")) ||
		photo.Allows("s3:PutObject", a.Object("race-photos", "o/e/raw/1.jpg")) {
		t.Error("PhotoApiTaskRole's s3 grant is not exactly s3:GetObject on the photo bucket's objects")
	}
}
