package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
	"github.com/pacerhq/pacer/services/internal/testkit/iamtest"
)

// grant is one IAM action on one resource of the stack.
type grant struct {
	Action string
	Target stack.Target
}

func (g grant) String() string { return g.Action + " on " + string(g.Target) }

// declared expands a binary's Access into grants.
func declared(bin string) map[grant]bool {
	out := map[grant]bool{}
	for _, g := range Access[bin] {
		for _, a := range g.Actions {
			for _, t := range g.Resources {
				out[grant{a, t}] = true
			}
		}
	}
	return out
}

// observed turns an enforcer's checks into the grants they used: each
// resource ARN to the stack resource it belongs to (targets; an index's
// ARN to its table's), counted.
func observed(checks []iamtest.Check, targets map[string]stack.Target) map[grant]int {
	out := map[grant]int{}
	for _, c := range checks {
		arn, _, _ := strings.Cut(c.Resource, "/index/")
		if b, ok := strings.CutPrefix(arn, "arn:aws:s3:::"); ok { // an object: its bucket's objects
			b, _, _ = strings.Cut(b, "/")
			arn = "arn:aws:s3:::" + b + "/*"
		}
		tg, ok := targets[arn]
		if !ok {
			tg = stack.Target("unknown(" + c.Resource + ")")
		}
		out[grant{c.Action, tg}]++
	}
	return out
}

// sortedGrants lists grants with their counts, one per line.
func sortedGrants(gs map[grant]int) string {
	lines := make([]string, 0, len(gs))
	for g, n := range gs {
		lines = append(lines, fmt.Sprintf("  %s ×%d", g, n))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// taskPolicies reads each binary's task-role policy from the committed
// template (what a user deploys; make verify checks it is what the code
// generates), its intrinsics resolved to the test's resources by refs.
func taskPolicies(t *testing.T, refs map[string]string) map[string]iamtest.Policy {
	t.Helper()
	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	roles := resources(committedTemplate(t), "AWS::IAM::Role")
	out := map[string]iamtest.Policy{}
	for _, sv := range spec.Services {
		pols, _ := roles[sv.ID+"TaskRole"]["Policies"].([]any)
		if len(pols) != 1 {
			t.Fatalf("%sTaskRole has %d policies, want 1", sv.ID, len(pols))
		}
		p, err := iamtest.ResolvePolicy(pols[0].(map[string]any)["PolicyDocument"], refs)
		if err != nil {
			t.Fatalf("%sTaskRole: %v", sv.ID, err)
		}
		out[sv.Name] = p
	}
	return out
}

// eachActionNeeded replays bin's recorded checks under its policy without
// each of its actions in turn: every action must be needed by a call the
// binary made, and the log names the calls refused without it.
func eachActionNeeded(t *testing.T, bin string, p iamtest.Policy, checks []iamtest.Check) {
	t.Helper()
	var b strings.Builder
	for _, a := range p.Actions() {
		denied := iamtest.Replay(p.Without(a), checks)
		if len(denied) == 0 {
			t.Errorf("%s: without %s its generated policy refuses none of its calls: the grant is not needed", bin, a)
			continue
		}
		ops := map[string]bool{}
		for _, c := range denied {
			ops[c.Operation] = true
		}
		names := make([]string, 0, len(ops))
		for op := range ops {
			names = append(names, op)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "  without %s: %d calls refused (%s), e.g. %s\n", a, len(denied), strings.Join(names, ", "), denied[0])
	}
	t.Logf("%s under its generated policy, one action dropped at a time:\n%s", bin, b.String())
}

// callTable lists each operation a binary called with the IAM actions AWS
// authorized it by, one per line: "DynamoDB.TransactWriteItems →
// dynamodb:ConditionCheckItem, dynamodb:PutItem".
func callTable(checks []iamtest.Check) string {
	acts := map[string]map[string]bool{}
	for _, c := range checks {
		if acts[c.Operation] == nil {
			acts[c.Operation] = map[string]bool{}
		}
		acts[c.Operation][c.Action] = true
	}
	lines := make([]string, 0, len(acts))
	for op, as := range acts {
		names := make([]string, 0, len(as))
		for a := range as {
			names = append(names, a)
		}
		sort.Strings(names)
		lines = append(lines, "  "+op+" → "+strings.Join(names, ", "))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
