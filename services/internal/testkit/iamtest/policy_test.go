package iamtest

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const (
	tableT = "arn:aws:dynamodb:us-east-1:000000000000:table/T"
	indexT = tableT + "/index/GSI1"
)

func mustParse(t *testing.T, doc any) Policy {
	t.Helper()
	p, err := ParsePolicy(doc)
	if err != nil {
		t.Fatalf("ParsePolicy: %v", err)
	}
	return p
}

func allow(actions, resources any) map[string]any {
	return map[string]any{"Effect": "Allow", "Action": actions, "Resource": resources}
}

func TestAllows(t *testing.T) {
	cases := []struct {
		name             string
		statement        any
		action, resource string
		want             bool
	}{
		{"exact", allow("dynamodb:GetItem", tableT), "dynamodb:GetItem", tableT, true},
		{"other action", allow("dynamodb:GetItem", tableT), "dynamodb:PutItem", tableT, false},
		{"other table", allow("dynamodb:GetItem", tableT), "dynamodb:GetItem", tableT + "2", false},
		{"action case-insensitive", allow("DynamoDB:getitem", tableT), "dynamodb:GetItem", tableT, true},
		{"resource case-sensitive", allow("dynamodb:GetItem", strings.ToLower(tableT)+"x"), "dynamodb:GetItem", tableT + "X", false},
		{"action *", allow("dynamodb:Get*", tableT), "dynamodb:GetItem", tableT, true},
		{"action * not another prefix", allow("dynamodb:Get*", tableT), "dynamodb:PutItem", tableT, false},
		{"action ?", allow("dynamodb:?etItem", tableT), "dynamodb:GetItem", tableT, true},
		{"action ? is one character", allow("dynamodb:?Item", tableT), "dynamodb:GetItem", tableT, false},
		{"all actions", allow("*", "*"), "sqs:SendMessage", "arn:aws:sqs:us-east-1:0:q", true},
		{"table does not grant its index", allow("dynamodb:Query", tableT), "dynamodb:Query", indexT, false},
		{"index/* grants the index", allow("dynamodb:Query", []any{tableT, tableT + "/index/*"}), "dynamodb:Query", indexT, true},
		{"index/* does not grant the table", allow("dynamodb:Query", tableT+"/index/*"), "dynamodb:Query", tableT, false},
		{"* crosses /", allow("dynamodb:Query", "arn:aws:dynamodb:*:*:table/*"), "dynamodb:Query", indexT, true},
		{"stream/*", allow("dynamodb:GetRecords", tableT+"/stream/*"), "dynamodb:GetRecords", tableT + "/stream/2024-01-01T00:00:00.000", true},
		{"resource ?", allow("sqs:SendMessage", "arn:aws:sqs:us-east-1:0:q?"), "sqs:SendMessage", "arn:aws:sqs:us-east-1:0:q1", true},
		{"resource ? needs one", allow("sqs:SendMessage", "arn:aws:sqs:us-east-1:0:q?"), "sqs:SendMessage", "arn:aws:sqs:us-east-1:0:q", false},
		{"list of actions", allow([]any{"sqs:ReceiveMessage", "sqs:SendMessage"}, "*"), "sqs:SendMessage", "arn:aws:sqs:us-east-1:0:q", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustParse(t, map[string]any{"Version": "2012-10-17", "Statement": c.statement})
			if got := p.Allows(c.action, c.resource); got != c.want {
				t.Errorf("Allows(%s, %s) = %v, want %v; policy:\n%s", c.action, c.resource, got, c.want, p)
			}
		})
	}
}

func TestDenyWins(t *testing.T) {
	p := mustParse(t, map[string]any{"Statement": []any{
		allow("dynamodb:*", "*"),
		map[string]any{"Effect": "Deny", "Action": "dynamodb:DeleteItem", "Resource": tableT},
	}})
	if !p.Allows("dynamodb:PutItem", tableT) {
		t.Error("PutItem denied; want the Allow of dynamodb:* to grant it")
	}
	if p.Allows("dynamodb:DeleteItem", tableT) {
		t.Error("DeleteItem allowed; want the Deny to win over the Allow")
	}
	if !p.Allows("dynamodb:DeleteItem", tableT+"2") {
		t.Error("DeleteItem on another table denied; the Deny names only T")
	}
	if (Policy{}).Allows("dynamodb:GetItem", tableT) {
		t.Error("the zero Policy allows; want default deny")
	}
}

func TestParsePolicyRefuses(t *testing.T) {
	cases := map[string]any{
		"NotAction":        map[string]any{"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"},
		"NotResource":      map[string]any{"Effect": "Allow", "Action": "s3:*", "NotResource": "*"},
		"Condition":        map[string]any{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Condition": map[string]any{}},
		"Principal":        map[string]any{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Principal": "*"},
		"Effect":           map[string]any{"Effect": "Maybe", "Action": "s3:*", "Resource": "*"},
		"no Resource":      map[string]any{"Effect": "Allow", "Action": "s3:*"},
		"an intrinsic":     allow("s3:*", map[string]any{"Fn::GetAtt": []any{"B", "Arn"}}),
		"a variable":       allow("s3:*", "arn:aws:s3:::b/${aws:username}"),
		"an empty list":    allow([]any{}, "*"),
		"an unknown field": map[string]any{"Effect": "Allow", "Action": "s3:*", "Resource": "*", "Sids": "x"},
	}
	for name, st := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParsePolicy(map[string]any{"Statement": []any{st}})
			if !errors.Is(err, ErrPolicy) {
				t.Errorf("ParsePolicy = %v, want an ErrPolicy", err)
			}
		})
	}
	for name, doc := range map[string]any{"no Statement": map[string]any{"Version": "2012-10-17"}, "not an object": []any{}} {
		if _, err := ParsePolicy(doc); !errors.Is(err, ErrPolicy) {
			t.Errorf("%s: ParsePolicy = %v, want an ErrPolicy", name, err)
		}
	}
}

// ParsePolicy takes raw JSON, the decoded form and typed Go values alike.
func TestParsePolicyForms(t *testing.T) {
	forms := map[string]any{
		"raw JSON": []byte(`{"Statement":{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"*"}}`),
		"typed":    map[string]any{"Statement": []map[string]any{{"Effect": "Allow", "Action": []string{"sqs:SendMessage"}, "Resource": []string{"*"}}}},
	}
	for name, doc := range forms {
		if p := mustParse(t, doc); !p.Allows("sqs:SendMessage", "arn:aws:sqs:us-east-1:0:q") {
			t.Errorf("%s: SendMessage denied; policy:\n%s", name, p)
		}
	}
}

func TestWithout(t *testing.T) {
	p := mustParse(t, map[string]any{"Statement": []any{
		allow([]any{"dynamodb:GetItem", "dynamodb:PutItem"}, tableT),
		allow("dynamodb:PutItem", tableT+"2"),
	}})
	q := p.Without("DynamoDB:PUTITEM")
	for _, res := range []string{tableT, tableT + "2"} {
		if q.Allows("dynamodb:PutItem", res) {
			t.Errorf("Without(PutItem) still allows PutItem on %s", res)
		}
		if !p.Allows("dynamodb:PutItem", res) {
			t.Errorf("Without changed the original: PutItem on %s denied", res)
		}
	}
	if !q.Allows("dynamodb:GetItem", tableT) {
		t.Error("Without(PutItem) lost GetItem")
	}
	if got, want := p.Actions(), []string{"dynamodb:GetItem", "dynamodb:PutItem"}; !slices.Equal(got, want) {
		t.Errorf("Actions = %v, want %v", got, want)
	}
	if got, want := q.Actions(), []string{"dynamodb:GetItem"}; !slices.Equal(got, want) {
		t.Errorf("Actions after Without = %v, want %v", got, want)
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"", "", true}, {"*", "", true}, {"", "a", false}, {"a*b*c", "aXbYbc", true}, {"a*b*c", "aXbYbcd", false},
		{"*/index/*", "table/T/index/G", true}, {"**", "x", true}, {"a?", "a", false}, {"*a", "bbba", true}, {"*a", "bbab", false},
	}
	for _, c := range cases {
		if got := match(c.pattern, c.s); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}
