package alarm

import (
	"strconv"
	"time"
)

// Severity says how fast someone must act.
type Severity string

// Severities.
const (
	// Critical pages: users are affected now, or data is lost for good
	// within a day (analytics events that AWS keeps for 24 hours only).
	Critical Severity = "critical"
	// Warning opens a ticket: act within working hours, before it gets worse.
	Warning Severity = "warning"
)

// Signal is a quantity derived from the metrics: a Prometheus recording
// rule, and the same quantity in CloudWatch. Helper signals (no CloudWatch
// equivalent) only feed other signals; CloudWatch-only signals (no Expr)
// read what only AWS measures (the load balancer's own answers, the age of
// queued messages, Firehose), which no Pacer process exports to Prometheus.
type Signal struct {
	// Record is the recording rule's name (level:metric:operations), or
	// for a CloudWatch-only signal its name in the alarm ("cloudwatch:…").
	Record string
	// Expr is its PromQL; "" for a CloudWatch-only signal.
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
	Metrics []Metric
	// Expression is metric math over the Metrics' IDs; {workerMaxTasks}
	// in it is the deployment's worker task maximum.
	Expression string
	Period     time.Duration
	// MissingIsBreaching makes a period without data count as breaching
	// (TreatMissingData breaching): for a metric Pacer emits on a timer
	// even when nothing happens, whose absence means its emitter is gone.
	// Otherwise no data is no problem (notBreaching): AWS publishes its
	// counts only when something was counted.
	MissingIsBreaching bool
}

// Metric is one CloudWatch metric a signal reads. Dimension values in
// braces ({queue}, {dlq}, {service}, {cluster}, {targetGroup},
// {loadBalancer}, {table}, {stage}, {deliveryStream}, {eventsRuleDLQ},
// {serviceName}: the public service's binary, its metrics' service
// label) are the deployment's names, filled in by its generator; a
// signal with {targetGroup} gets an alarm per public service, one with
// {table} an alarm per table.
type Metric struct {
	ID, Namespace, Name, Stat string
	Dimensions                map[string]string
	// Unit is the CloudWatch unit of a custom metric (Namespace): the one
	// its emitter writes ("Count", "Seconds", "None"); "" for AWS's.
	Unit string
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
