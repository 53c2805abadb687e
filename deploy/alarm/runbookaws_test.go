package alarm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The AWS CLI commands a runbook may run: reads (describe-, get-, list-,
// the Logs Insights queries, a drift check), a stack deploy that changes parameters
// only, and actions on data or tasks that no template property holds
// (moving dead letters, replaying events, stopping a hung task, which its
// service replaces). Anything else changes what CloudFormation owns, and
// the next deploy would undo it: `aws ecs update-service`, scaling
// targets, alarms, queue or table settings.
var (
	awsCommand   = regexp.MustCompile(`\baws\s+([a-z0-9-]+)\s+([a-z0-9-]+)`)
	readCommand  = regexp.MustCompile(`^(describe|get|list)-`)
	overrides    = regexp.MustCompile(`--parameter-overrides((?:[ \t]+(?:\\\n[ \t]*)?[A-Za-z0-9]+=\S*)+)`)
	overrideName = regexp.MustCompile(`([A-Za-z0-9]+)=`)
	// cloudWatchRead is a step that reads CloudWatch: the AWS CLI, or
	// the helpers of docs/operations.md.
	cloudWatchRead = regexp.MustCompile(`\baws (cloudwatch|logs) |\bcwmetric |\bcwlogs `)
	allowedActions = map[string]bool{
		"cloudformation deploy":             true,
		"logs start-query":                  true,
		"logs tail":                         true,
		"sqs start-message-move-task":       true,
		"sqs receive-message":               true,
		"sqs delete-message":                true,
		"events put-events":                 true,
		"ecs stop-task":                     true,
		"firehose put-record-batch":         true,
		"cloudwatch get-metric-data":        true,
		"cloudwatch describe-alarms":        true,
		"cloudwatch describe-alarm-history": true,
		"cloudformation detect-stack-drift": true, // starts a drift check; changes nothing
		"s3api head-bucket":                 true,
	}
)

// runbookProblems says what in a runbook does not work with CloudWatch
// alone or changes what CloudFormation owns: no step reads CloudWatch, an
// AWS command that changes a resource of the stack, a parameter override
// that names no parameter of the template (params).
func runbookProblems(text string, params map[string]bool) []string {
	var out []string
	if !cloudWatchRead.MatchString(text) {
		out = append(out, "no step reads CloudWatch (aws cloudwatch, aws logs, or cwmetric/cwlogs of docs/operations.md)")
	}
	for _, m := range awsCommand.FindAllStringSubmatch(text, -1) {
		cmd := m[1] + " " + m[2]
		if !readCommand.MatchString(m[2]) && !allowedActions[cmd] {
			out = append(out, "`aws "+cmd+"` changes what CloudFormation owns: change a stack parameter instead (aws cloudformation deploy --parameter-overrides)")
		}
	}
	for _, m := range overrides.FindAllStringSubmatch(text, -1) {
		for _, n := range overrideName.FindAllStringSubmatch(m[1], -1) {
			if !params[n[1]] {
				out = append(out, "--parameter-overrides names "+n[1]+", which is no parameter of the template")
			}
		}
	}
	return out
}

// templateParameters are the parameters of the committed template.
func templateParameters(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "deploy/aws/pacer.template.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct{ Parameters map[string]any }
	if err := json.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for k := range tpl.Parameters {
		out[k] = true
	}
	if len(out) == 0 {
		t.Fatal("the template has no parameters")
	}
	return out
}

// TestRunbooksWorkWithCloudWatch: every runbook diagnoses with CloudWatch
// (the AWS stack has no Prometheus), and changes nothing CloudFormation
// owns: scaling and rollback go through the stack's parameters.
func TestRunbooksWorkWithCloudWatch(t *testing.T) {
	params := templateParameters(t)
	files, _ := filepath.Glob(filepath.Join(root, "docs/runbooks/*.md"))
	if len(files) == 0 {
		t.Fatal("no runbooks")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range runbookProblems(string(b), params) {
			t.Errorf("%s: %s", filepath.Base(f), p)
		}
	}
}

// The check refuses a runbook that scales or rolls back behind
// CloudFormation's back, overrides a parameter the template lacks, or
// reads no CloudWatch; it accepts the ways that work.
func TestRunbookCheckRefusesMistakes(t *testing.T) {
	params := map[string]bool{"WorkerImage": true, "Stage": true}
	ok := "cwmetric AWS/SQS ApproximateAgeOfOldestMessage Maximum QueueName=$Q\n" +
		"aws ecs describe-services --cluster pacer-$STAGE --services asyncevent-worker\n" +
		"aws cloudformation deploy --stack-name $STACK --template-file deployed.json \\\n  --parameter-overrides WorkerImage=repo@sha256:ab Stage=prod\n"
	if p := runbookProblems(ok, params); len(p) > 0 {
		t.Errorf("a valid runbook is refused: %v", p)
	}
	for name, bad := range map[string]string{
		"scale by hand":      ok + "aws ecs update-service --cluster c --service asyncevent-worker --desired-count 5\n",
		"roll back by hand":  ok + "aws ecs update-service --cluster c --service s --task-definition pacer-prod-asyncevent-worker:41\n",
		"scaling bounds":     ok + "aws application-autoscaling register-scalable-target --max-capacity 40\n",
		"queue settings":     ok + "aws sqs set-queue-attributes --queue-url $Q --attributes VisibilityTimeout=60\n",
		"unknown parameter":  ok + "aws cloudformation deploy --stack-name s --template-file t --parameter-overrides WorkerMaxCount=40\n",
		"unknown, continued": ok + "aws cloudformation deploy --stack-name s --template-file t --parameter-overrides Stage=prod \\\n    WorkerMax=40\n",
		"no CloudWatch":      "PromQL: `pacer:queue_stalled`\naws ecs describe-services --cluster c\n",
	} {
		if p := runbookProblems(bad, params); len(p) == 0 {
			t.Errorf("%s: accepted:\n%s", name, bad)
		}
	}
}

// TestCatalogShipsWhatCloudWatchReads: the custom metrics the alarms read
// are shipped, each with one unit and set of dimensions, the stage among
// them; only those treat missing data as breaching (AWS's counts are
// simply absent when nothing was counted); and a CloudWatch-only signal
// feeds no Prometheus rule.
func TestCatalogShipsWhatCloudWatchReads(t *testing.T) {
	shipped, err := Shipped()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range shipped {
		names[c.Name] = true
	}
	for _, s := range Signals(Defaults()) {
		custom := false
		for _, m := range s.CloudWatch.Metrics {
			switch {
			case m.Namespace == Namespace:
				custom = true
				if !names[m.Name] || m.Unit == "" {
					t.Errorf("signal %s reads %s (unit %q), which is not shipped with a unit", s.Record, m.Name, m.Unit)
				}
			case !strings.HasPrefix(m.Namespace, "AWS/") && m.Namespace != "ECS/ContainerInsights":
				t.Errorf("signal %s reads namespace %s: neither Pacer's nor AWS's", s.Record, m.Namespace)
			case m.Unit != "":
				t.Errorf("signal %s gives AWS's %s a unit", s.Record, m.Name)
			}
		}
		if s.CloudWatch.MissingIsBreaching && !custom {
			t.Errorf("signal %s treats missing data as breaching, but AWS publishes its metrics only when there is something to count", s.Record)
		}
		if s.Expr == "" {
			for _, other := range Signals(Defaults()) {
				if strings.Contains(other.Expr, s.Record) {
					t.Errorf("%s uses %s, which is CloudWatch-only", other.Record, s.Record)
				}
			}
		}
	}
	for _, want := range []string{"pacer_worker_messages_total", "pacer_event_capacity_invariant_ok", "pacer_events_publisher_lag_seconds"} {
		if !names[want] {
			t.Errorf("%s is not shipped", want)
		}
	}
	i := signalIndex(Signals(Defaults()), InvariantOK)
	if i < 0 || !Signals(Defaults())[i].CloudWatch.MissingIsBreaching {
		t.Error("the oversell alarm must treat missing data as breaching")
	}
}

func signalIndex(signals []Signal, record string) int {
	for i, s := range signals {
		if s.Record == record {
			return i
		}
	}
	return -1
}
