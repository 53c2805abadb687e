package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docRefs is what a deployment doc names: make targets, template
// parameters (or outputs) and repository files, each with where it was
// found.
type docRefs struct {
	targets, params, files map[string]bool
}

var (
	codeSpan     = regexp.MustCompile("`([^`\n]+)`")
	makeCall     = regexp.MustCompile(`\bmake ([a-z][a-z0-9-]*)`)
	override     = regexp.MustCompile(`\b([A-Z][A-Za-z0-9]*)=`)
	paramLike    = regexp.MustCompile(`^([A-Z][A-Za-z0-9]*(Arn|Image|HostName|Cidrs|SubnetIds|VpcId|GroupId|Architecture|Url|Origins|Units|Port))(=.*)?$`)
	repoPath     = regexp.MustCompile(`^(deploy|docs|analytics|services|sdk|tools|modules|internal|openapi|bench)/[A-Za-z0-9_.*/-]*$`)
	manifestName = regexp.MustCompile(`^[a-z0-9-]+\.yaml$`)
)

// scanDoc collects what doc names: make targets in code (spans and fenced
// blocks); the names set by --parameter-overrides in fenced blocks, and
// code spans that look like parameters (CamelCase ending Arn, Image,
// HostName, …); code spans that are repository paths, and bare manifest
// file names (deploy/k8s).
func scanDoc(doc string) docRefs {
	r := docRefs{targets: map[string]bool{}, params: map[string]bool{}, files: map[string]bool{}}
	var code []string
	inFence, overrides := false, false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence, overrides = !inFence, false
			continue
		}
		if inFence {
			code = append(code, line)
			if strings.Contains(line, "--parameter-overrides") {
				overrides = true
			}
			if overrides {
				_, args, _ := strings.Cut(line, "--parameter-overrides")
				if args == "" {
					args = line
				}
				for _, m := range override.FindAllStringSubmatch(args, -1) {
					r.params[m[1]] = true
				}
				overrides = strings.HasSuffix(strings.TrimSpace(strings.Split(line, "#")[0]), `\`)
			}
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			code = append(code, m[1])
			switch s := m[1]; {
			case paramLike.MatchString(s):
				r.params[paramLike.FindStringSubmatch(s)[1]] = true
			case repoPath.MatchString(s):
				r.files[s] = true
			case manifestName.MatchString(s):
				r.files["deploy/k8s/"+s] = true
			}
		}
	}
	for _, c := range code {
		for _, m := range makeCall.FindAllStringSubmatch(c, -1) {
			r.targets[m[1]] = true
		}
	}
	return r
}

// missing returns what r names that does not exist: a target the
// Makefile does not declare, a name neither a parameter nor an output of
// the template, a path matching no file.
func (r docRefs) missing(root, makefile string, tpl map[string]any) []string {
	var out []string
	for tg := range r.targets {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(tg) + `:`).MatchString(makefile) {
			out = append(out, "make target "+tg)
		}
	}
	params, _ := tpl["Parameters"].(map[string]any)
	outputs, _ := tpl["Outputs"].(map[string]any)
	for p := range r.params {
		if params[p] == nil && outputs[p] == nil {
			out = append(out, "parameter "+p)
		}
	}
	for f := range r.files {
		if m, _ := filepath.Glob(filepath.Join(root, strings.TrimSuffix(f, "/"))); len(m) == 0 {
			out = append(out, "file "+f)
		}
	}
	return out
}

// docs/deploy.md, a newcomer's path from images to tear-down, names only
// make targets, template parameters and files that exist.
func TestDeployDocNamesWhatExists(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	tpl := committedTemplate(t)
	refs := scanDoc(string(doc))
	for _, want := range []string{"images", "deploy-gen", "verify"} {
		if !refs.targets[want] {
			t.Errorf("docs/deploy.md does not name make %s", want)
		}
	}
	if len(refs.params) < 10 || len(refs.files) < 5 {
		t.Errorf("the scan found %d parameters and %d files: it no longer reads the doc", len(refs.params), len(refs.files))
	}
	for _, m := range refs.missing(root, string(mk), tpl) {
		t.Errorf("docs/deploy.md names %s, which does not exist", m)
	}
	// The check itself: a made-up target, parameter and file are caught.
	bad := scanDoc("Run `make imagez`, set `CertificatesArn`, read `deploy/aws/nope.json`.\n```sh\n" +
		"aws cloudformation deploy --parameter-overrides Stage=prod \\\n  WorkerImagez=x\n```\n")
	if got := bad.missing(root, string(mk), tpl); len(got) != 4 {
		t.Errorf("a doc with 4 wrong names: the check found %v", got)
	}
}

// Figures and steps docs/deploy.md states agree with the template: the
// receives before the DLQ, and no step that needs an output before the
// stack can have one (a first create starts the services, which must
// already reach Postgres; TestFirstCreate holds the template to it).
func TestDeployDocAgreesWithTheTemplate(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range deployDocProblems(string(doc), committedTemplate(t)) {
		t.Error(p)
	}
	tpl := committedTemplate(t)
	for mistake, bad := range map[string]string{
		"receives":     string(doc) + "\n(redrive after 3 receives, 30 s visibility)",
		"output first": string(doc) + "\nPostgres for photo-api (allow the `TaskSecurityGroupId` output into it);",
		"no way in":    strings.ReplaceAll(string(doc), "`DatabaseSecurityGroupId`", "`DatabaseGroup`"),
	} {
		if got := deployDocProblems(bad, tpl); len(got) == 0 {
			t.Errorf("%s: the check passes", mistake)
		}
	}
}

var (
	redriveAfter = regexp.MustCompile(`redrive after (\d+) receives`)
	outputFirst  = regexp.MustCompile("allow the `TaskSecurityGroupId` output")
)

func deployDocProblems(doc string, tpl map[string]any) []string {
	var out []string
	want := ""
	for _, r := range resources(tpl, "AWS::SQS::Queue") {
		if rp, ok := r["RedrivePolicy"].(map[string]any); ok {
			want = fmt.Sprint(rp["maxReceiveCount"])
		}
	}
	ms := redriveAfter.FindAllStringSubmatch(doc, -1)
	if len(ms) == 0 {
		out = append(out, "the doc does not say after how many receives a message goes to the DLQ")
	}
	for _, m := range ms {
		if m[1] != want {
			out = append(out, fmt.Sprintf("the doc says redrive after %s receives, the template %s", m[1], want))
		}
	}
	if outputFirst.MatchString(doc) {
		out = append(out, "the doc asks to allow the TaskSecurityGroupId output into Postgres: it exists only after the create the services need it for")
	}
	if !strings.Contains(doc, "`DatabaseSecurityGroupId`") {
		out = append(out, "the doc does not say how the tasks reach Postgres on a first create (DatabaseSecurityGroupId)")
	}
	return out
}
