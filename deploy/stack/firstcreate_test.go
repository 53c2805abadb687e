package stack_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
	"github.com/pacerhq/pacer/internal/repo"
)

// A first create, on paper (cfneval_test.go): CloudFormation creates a
// resource after everything it names (Ref, Fn::GetAtt, Fn::Sub,
// DependsOn), and an ECS service starts its tasks as it is created. So
// whatever a task needs at start must be a parameter (it exists before
// the stack: an image, a secret, a URL) or a resource the service
// depends on, directly or not. Postgres is the need no reference
// expresses: photo-api migrates before it listens, and a database that
// does not yet admit its tasks fails them, the circuit breaker fails the
// service and the stack rolls back. And a rollback must leave nothing
// behind that stops the retry: no resource is kept (Retain, Snapshot) when
// its first create fails, nor protected from deletion by default: the
// tables' deletion protection (TableDeletionProtection) is turned on by an
// update once the first create has completed, and docs/deploy.md's
// failed-first-create steps turn it off before the delete for whoever
// set it from the start.

var resourceRef = regexp.MustCompile(`\b(?:ref|att):([A-Za-z0-9]+)`)

// dependencies are each created resource's direct dependencies: its
// DependsOn and the resources its resolved properties name.
func (d *deployed) dependencies() map[string][]string {
	res := d.tpl["Resources"].(map[string]any)
	deps := map[string][]string{}
	for id, r := range d.Resources {
		seen := map[string]bool{}
		for _, dep := range asList(res[id].(map[string]any)["DependsOn"]) {
			seen[dep.(string)] = true
		}
		for _, m := range resourceRef.FindAllStringSubmatch(fmt.Sprint(r.Properties), -1) {
			if _, ok := d.Resources[m[1]]; ok {
				seen[m[1]] = true
			}
		}
		deps[id] = slices.Sorted(maps.Keys(seen))
	}
	return deps
}

// before is every resource created before id: its dependencies, theirs,
// and so on.
func before(deps map[string][]string, id string) map[string]bool {
	out := map[string]bool{}
	var walk func(string)
	walk = func(id string) {
		for _, d := range deps[id] {
			if !out[d] {
				out[d] = true
				walk(d)
			}
		}
	}
	walk(id)
	return out
}

// firstCreateProblems deploys tpl on paper for values and says what would
// stop its first create, or its retry after a rollback.
func firstCreateProblems(tpl map[string]any, values map[string]string) []string {
	d, err := deploy(tpl, values)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	res := tpl["Resources"].(map[string]any)
	for _, id := range slices.Sorted(maps.Keys(d.Resources)) {
		if p := res[id].(map[string]any)["DeletionPolicy"]; p == "Retain" || p == "Snapshot" {
			out = append(out, fmt.Sprintf("%s: DeletionPolicy %v keeps it when the first create rolls back, and the retry fails on it", id, p))
		}
		if d.Resources[id].Properties["DeletionProtectionEnabled"] == true {
			out = append(out, fmt.Sprintf("%s: deletion protection keeps it when the first create rolls back (CloudFormation cannot delete it either), and the retry fails on it", id))
		}
	}
	paramValues := map[string]bool{}
	for _, v := range d.params {
		paramValues[fmt.Sprint(v)] = true
	}
	deps := d.dependencies()
	for _, id := range slices.Sorted(maps.Keys(d.Resources)) {
		sv := d.Resources[id]
		if sv.Type != "AWS::ECS::Service" {
			continue
		}
		earlier := before(deps, id)
		td := d.Resources[strings.TrimPrefix(fmt.Sprint(sv.Properties["TaskDefinition"]), "ref:")]
		c := asMap(first(td.Properties["ContainerDefinitions"]))
		if img := fmt.Sprint(c["Image"]); !paramValues[img] {
			out = append(out, fmt.Sprintf("%s: its image %s is not a parameter, so it may not exist when the service starts", id, img))
		}
		needsDB := false
		for _, s := range asList(c["Secrets"]) {
			s := asMap(s)
			if v := fmt.Sprint(s["ValueFrom"]); !paramValues[v] {
				out = append(out, fmt.Sprintf("%s: secret %v comes from %s, not a parameter: it may not be there at start", id, s["Name"], v))
			}
			needsDB = needsDB || s["Name"] == "DATABASE_URL"
		}
		if !needsDB {
			continue
		}
		sg := values[stack.ParamDatabaseSG]
		if sg == "" {
			continue // a documented prerequisite: the database admits the private subnets
		}
		port := fmt.Sprint(d.params[stack.ParamDatabasePort])
		tasks := fmt.Sprint(first(asMap(asMap(sv.Properties["NetworkConfiguration"])["AwsvpcConfiguration"])["SecurityGroups"]))
		admitted := false
		for dep := range earlier {
			r := d.Resources[dep]
			admitted = admitted || r.Type == "AWS::EC2::SecurityGroupIngress" && r.Properties["GroupId"] == sg &&
				fmt.Sprint(r.Properties["SourceSecurityGroupId"]) == tasks && r.Properties["IpProtocol"] == "tcp" &&
				fmt.Sprint(r.Properties["FromPort"]) == port && fmt.Sprint(r.Properties["ToPort"]) == port
		}
		if !admitted {
			out = append(out, fmt.Sprintf("%s needs Postgres at start, but nothing admits its tasks (%s) into %s on %s before it is created", id, tasks, sg, port))
		}
	}
	return out
}

var (
	protected      = map[string]string{stack.ParamDeletionProtection: "true"}
	withDatabaseSG = map[string]string{stack.ParamDatabaseSG: "sg-0123456789abcdef0", stack.ParamDatabasePort: "6432"}
)

func TestFirstCreate(t *testing.T) {
	tpl := readTemplate(t)
	for name, values := range map[string]map[string]string{"with the database's security group": withDatabaseSG, "without": nil} {
		for _, p := range firstCreateProblems(tpl, values) {
			t.Errorf("%s: %s", name, p)
		}
	}
	// With deletion protection set from the start the tables are kept,
	// and only they: the documented failed-first-create steps turn it off
	// on each before deleting the stack.
	var kept []string
	for _, p := range firstCreateProblems(tpl, protected) {
		id, _, _ := strings.Cut(p, ":")
		if !strings.Contains(p, "deletion protection keeps it") {
			t.Errorf("with deletion protection: %s", p)
		}
		kept = append(kept, id)
	}
	if want := []string{stack.IDAsyncTable, stack.IDCheckpointTable, stack.IDPhotoTable}; !slices.Equal(kept, want) {
		t.Errorf("with deletion protection, the first create keeps %v, want the tables %v", kept, want)
	}
	steps := failedFirstCreateSteps(t)
	off, del := strings.Index(steps, "--no-deletion-protection-enabled"), strings.Index(steps, "delete-stack")
	if off < 0 || del < off || !strings.Contains(steps, "update-table") {
		t.Errorf("docs/deploy.md's failed-first-create steps do not turn the tables' deletion protection off (update-table --no-deletion-protection-enabled) before delete-stack:\n%s", steps)
	}
	d, err := deploy(tpl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Resources["DatabaseIngress"]; ok {
		t.Error("without DatabaseSecurityGroupId, an ingress rule is created")
	}
	// The parameters refuse what EC2 would refuse after the create began.
	for _, bad := range []map[string]string{{stack.ParamDatabaseSG: "sg-123"}, {stack.ParamDatabaseSG: "db-security-group"}} {
		if _, err := deploy(tpl, bad); err == nil || !strings.Contains(err.Error(), "AllowedPattern") {
			t.Errorf("%v: %v, want the pattern to refuse it", bad, err)
		}
	}
}

// failedFirstCreateSteps is docs/deploy.md's "A failed first create"
// paragraph and the code block after it.
func failedFirstCreateSteps(t *testing.T) string {
	t.Helper()
	b, err := repo.ReadFile("docs", "deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "**A failed first create**")
	if start < 0 {
		t.Fatal(`docs/deploy.md has no "**A failed first create**" paragraph`)
	}
	doc = doc[start:]
	fence := strings.Index(doc, "```")
	end := -1
	if fence >= 0 {
		end = strings.Index(doc[fence+3:], "```")
	}
	if end < 0 {
		t.Fatal(`docs/deploy.md's "A failed first create" has no code block`)
	}
	return doc[:fence+3+end]
}

func TestFirstCreateChecksCatchMutations(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(res map[string]any)
		want   string
	}{
		{"a table kept on a failed create", func(res map[string]any) {
			resourceOf(map[string]any{"Resources": res}, stack.IDAsyncTable)["DeletionPolicy"] = "Retain"
		}, "AsyncEventTable: DeletionPolicy Retain"},
		{"photo-api not waiting for the ingress", func(res map[string]any) {
			props := resourceOf(map[string]any{"Resources": res}, "PhotoApiService")["Properties"].(map[string]any)
			props["Tags"] = slices.DeleteFunc(slices.Clone(props["Tags"].([]any)), func(tag any) bool {
				return tag.(map[string]any)["Key"] == stack.TagDatabaseIngress
			})
		}, "PhotoApiService needs Postgres at start"},
		{"the ingress from the load balancer", func(res map[string]any) {
			resourceOf(map[string]any{"Resources": res}, "DatabaseIngress")["Properties"].(map[string]any)["SourceSecurityGroupId"] =
				map[string]any{"Fn::GetAtt": []any{"LoadBalancerSecurityGroup", "GroupId"}}
		}, "PhotoApiService needs Postgres at start"},
		{"the ingress on the default port", func(res map[string]any) {
			props := resourceOf(map[string]any{"Resources": res}, "DatabaseIngress")["Properties"].(map[string]any)
			props["FromPort"], props["ToPort"] = 5432.0, 5432.0
		}, "on 6432 before it is created"},
		{"a table protected whatever the parameter says", func(res map[string]any) {
			resourceOf(map[string]any{"Resources": res}, stack.IDCheckpointTable)["Properties"].(map[string]any)["DeletionProtectionEnabled"] = true
		}, "CheckpointTable: deletion protection keeps it"},
		{"an image made by the stack", func(res map[string]any) {
			td := resourceOf(map[string]any{"Resources": res}, "WorkerTaskDefinition")["Properties"].(map[string]any)
			td["ContainerDefinitions"].([]any)[0].(map[string]any)["Image"] = map[string]any{"Fn::Sub": "${Cluster}/worker@sha256:0"}
		}, "WorkerService: its image ref:Cluster/worker@sha256:0 is not a parameter"},
	} {
		tpl := readTemplate(t)
		c.mutate(tpl["Resources"].(map[string]any))
		found := firstCreateProblems(tpl, withDatabaseSG)
		if !slices.ContainsFunc(found, func(f string) bool { return strings.Contains(f, c.want) }) {
			t.Errorf("%s: found %q, want a problem saying %q", c.name, found, c.want)
		}
	}
}
