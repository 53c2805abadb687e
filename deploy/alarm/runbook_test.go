package alarm

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// root is the repository root, from this package's directory.
const root = "../.."

// committedAlerts reads the alerting rules of the committed rule file.
func committedAlerts(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "deploy/prometheus/rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("deploy/prometheus/rules.yml: %v", err)
	}
	var out []rule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("deploy/prometheus/rules.yml has no alert")
	}
	return out
}

// TestEveryAlertHasItsRunbook: each alert of the committed rule file links
// docs/runbooks/<alert>.md at the configured base, that file exists and is
// about that alert, and the alert carries severity, summary and
// description; each CloudWatch-only alert of the catalogue has its
// runbook too.
func TestEveryAlertHasItsRunbook(t *testing.T) {
	cfg := Defaults()
	for _, a := range Alerts(cfg) {
		b, err := os.ReadFile(filepath.Join(root, a.RunbookPath()))
		if err != nil {
			t.Errorf("%s has no runbook: %v", a.Name, err)
		} else if first, _, _ := strings.Cut(string(b), "\n"); first != "# "+a.Name {
			t.Errorf("%s: first line %q, want %q", a.RunbookPath(), first, "# "+a.Name)
		}
	}
	for _, r := range committedAlerts(t) {
		a := Alert{Name: r.Alert}
		if got, want := r.Annotations["runbook_url"], a.RunbookURL(cfg.RunbookBase); got != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
		}
		b, err := os.ReadFile(filepath.Join(root, a.RunbookPath()))
		if err != nil {
			t.Errorf("%s has no runbook: %v", r.Alert, err)
			continue
		}
		if first, _, _ := strings.Cut(string(b), "\n"); first != "# "+r.Alert {
			t.Errorf("%s: first line %q, want %q", a.RunbookPath(), first, "# "+r.Alert)
		}
		if s := Severity(r.Labels["severity"]); s != Critical && s != Warning {
			t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
		}
		for _, k := range []string{"summary", "description"} {
			if strings.TrimSpace(r.Annotations[k]) == "" {
				t.Errorf("%s: no %s", r.Alert, k)
			}
		}
	}
}

// TestEveryRunbookHasItsAlert: no runbook is left for an alert that no
// longer exists, in the rule file or in CloudWatch.
func TestEveryRunbookHasItsAlert(t *testing.T) {
	var names []string
	for _, a := range Alerts(Defaults()) {
		names = append(names, a.Name)
	}
	for _, r := range committedAlerts(t) {
		if !slices.Contains(names, r.Alert) {
			t.Errorf("deploy/prometheus/rules.yml has %s, which the catalogue does not (run make rules)", r.Alert)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "docs/runbooks/*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("docs/runbooks is empty")
	}
	for _, f := range files {
		name, ok := strings.CutSuffix(filepath.Base(f), ".md")
		if !ok || !slices.Contains(names, name) {
			t.Errorf("docs/runbooks/%s is no alert's runbook (alerts: %v)", filepath.Base(f), names)
		}
	}
}

// TestRunbookLinksResolve: the runbooks' relative links point at files.
func TestRunbookLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#:]+\.md)(#[^)]*)?\)`)
	files, _ := filepath.Glob(filepath.Join(root, "docs/runbooks/*.md"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), m[1])); err != nil {
				t.Errorf("%s links %s, which does not exist", filepath.Base(f), m[1])
			}
		}
	}
}

// TestCatalogIsConsistent: alerts watch signals that exist, each signal
// uses only signals recorded before it, and each CloudWatch expression uses the metrics
// it declares.
func TestCatalogIsConsistent(t *testing.T) {
	cfg := Defaults()
	if err := cfg.Scaling.Validate(); err != nil {
		t.Fatal(err)
	}
	signals := Signals(cfg)
	var records []string
	for _, s := range signals {
		for _, later := range signals {
			if later.Record != s.Record && strings.Contains(s.Expr, later.Record) && !slices.Contains(records, later.Record) {
				t.Errorf("signal %s uses %s, which is recorded after it", s.Record, later.Record)
			}
		}
		records = append(records, s.Record)
		for _, m := range s.CloudWatch.Metrics {
			if !regexp.MustCompile(`\b` + m.ID + `\b`).MatchString(s.CloudWatch.Expression) {
				t.Errorf("signal %s: CloudWatch metric %s is not in %q", s.Record, m.ID, s.CloudWatch.Expression)
			}
		}
	}
	seen := map[string]bool{}
	for _, a := range Alerts(cfg) {
		if seen[a.Name] {
			t.Errorf("alert %s defined twice", a.Name)
		}
		seen[a.Name] = true
		i := slices.IndexFunc(signals, func(s Signal) bool { return s.Record == a.Signal })
		if i < 0 {
			t.Errorf("alert %s watches %s, which is no signal", a.Name, a.Signal)
			continue
		}
		if len(signals[i].CloudWatch.Metrics) == 0 {
			t.Errorf("alert %s watches %s, which has no CloudWatch equivalent", a.Name, a.Signal)
		}
	}
	i := slices.IndexFunc(Alerts(cfg), func(a Alert) bool { return a.Signal == BacklogPerWorker })
	if i < 0 {
		t.Fatalf("no alert watches %s", BacklogPerWorker)
	}
	if got := Alerts(cfg)[i].Threshold; got != cfg.Scaling.TargetBacklogPerWorker() {
		t.Errorf("backlog threshold %v, want the scaling target %v", got, cfg.Scaling.TargetBacklogPerWorker())
	}
}
