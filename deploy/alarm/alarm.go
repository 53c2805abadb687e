package alarm

import (
	"strconv"
	"time"
)

// Severity says how fast someone must act.
type Severity string

// Severities.
const (
	// Critical pages: users are affected now.
	Critical Severity = "critical"
	// Warning opens a ticket: act within working hours, before it gets worse.
	Warning Severity = "warning"
)

// Signal is a quantity derived from the metrics: a Prometheus recording
// rule, and the same quantity in CloudWatch. Helper signals (no CloudWatch
// equivalent) only feed other signals.
type Signal struct {
	// Record is the recording rule's name (level:metric:operations).
	Record string
	// Expr is its PromQL.
	Expr string
	// Help says what it is; it is the rule's comment in the rule file.
	Help string
	// CloudWatch is the same quantity in CloudWatch, or the zero value for
	// a helper.
	CloudWatch CloudWatch
}

// CloudWatch is a signal in CloudWatch: metric math over AWS or custom
// metrics, evaluated over Period.
type CloudWatch struct {
	Metrics    []Metric
	Expression string // metric math over the Metrics' IDs
	Period     time.Duration
}

// Metric is one CloudWatch metric a signal reads. Dimension values in
// braces ({queue}, {dlq}, {service}, {cluster}, {targetGroup},
// {loadBalancer}) are the deployment's names, filled in by its generator.
type Metric struct {
	ID, Namespace, Name, Stat string
	Dimensions                map[string]string
}

// Alert is one alerting rule: Signal Op Threshold, held For.
type Alert struct {
	// Name is the alert's name and its runbook's file name
	// (docs/runbooks/<Name>.md).
	Name string
	// Signal is the Record of the signal it watches.
	Signal    string
	Op        string // ">" or "<"
	Threshold float64
	// For is how long the condition must hold before the alert fires; 0
	// fires on the first evaluation.
	For      time.Duration
	Severity Severity
	// Summary is one line; Prometheus fills {{ $value }} in.
	Summary string
	// Description says what it means for users and where to look first.
	Description string
}

// Expr is the alert's PromQL condition.
func (a Alert) Expr() string {
	return a.Signal + " " + a.Op + " " + strconv.FormatFloat(a.Threshold, 'g', -1, 64)
}

// RunbookPath is the runbook's path from the repository root.
func (a Alert) RunbookPath() string { return "docs/runbooks/" + a.Name + ".md" }

// RunbookURL is the runbook's address: base followed by RunbookPath.
func (a Alert) RunbookURL(base string) string { return base + a.RunbookPath() }
