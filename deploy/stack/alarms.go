package stack

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
)

// The alerts' SNS topic, and the optional e-mail subscription to it.
const (
	idAlertTopic     = "AlertTopic"
	idAlertEmail     = "AlertEmailSubscription"
	paramAlertEmail  = "AlertEmail"
	condAlertEmail   = "HasAlertEmail"
	alertEmailFormat = `^([^@\s]+@[^@\s]+\.[^@\s]+)?$`
)

// alarmParameters adds AlertEmail: an address the alert topic mails every
// alarm's change to (AWS sends it a confirmation first), or none.
func (s *Spec) alarmParameters(p map[string]Parameter) {
	p[paramAlertEmail] = Parameter{Type: "String", Default: str(""), AllowedPattern: alertEmailFormat,
		Description: "E-mail address subscribed to the alerts' SNS topic (pacer-<stage>-alerts): every alarm and its recovery, with the runbook's link; " +
			"SNS mails a confirmation link first. Empty: no subscription (subscribe a pager or chat to the AlertTopicArn output instead)",
		ConstraintDescription: "empty, or one e-mail address"}
}

func (s *Spec) backlogSignal() alarm.CloudWatch {
	for _, sig := range alarm.Signals(s.Alarms) {
		if sig.Record == alarm.BacklogPerWorker {
			return sig.CloudWatch
		}
	}
	panic("stack: deploy/alarm has no " + alarm.BacklogPerWorker + " signal")
}

func (s *Spec) worker() Service {
	for _, sv := range s.Services {
		if sv.Scaled {
			return sv
		}
	}
	panic("stack: no scaled (worker) service")
}

// scope is what an alarm's placeholders stand for: the service of
// {service}, {targetGroup} and {serviceName} (its binary's name, the
// service label of its metrics), the table of {table}.
type scope struct {
	svc   Service
	table Table
}

// dimensions fills deploy/alarm's placeholders ({queue}, {dlq},
// {cluster}, {service}, {loadBalancer}, {targetGroup}, {table}, {stage},
// {deliveryStream}, {eventsRuleDLQ}, {serviceName}) with the stack's
// resources in scope sc.
func (s *Spec) dimensions(dims map[string]string, sc scope) []any {
	names := make([]string, 0, len(dims))
	for k := range dims {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []any
	for _, name := range names {
		val := dims[name]
		v := placeholder(val, sc)
		if v == nil {
			if strings.HasPrefix(val, "{") {
				panic(fmt.Sprintf("stack: unknown dimension placeholder %s", val))
			}
			v = val
		}
		out = append(out, map[string]any{"Name": name, "Value": v})
	}
	return out
}

// placeholder is the template's value of one of deploy/alarm's
// placeholders in scope sc, or nil when val is none.
func placeholder(val string, sc scope) any {
	switch val {
	case "{queue}":
		return GetAtt(idQueue, "QueueName")
	case "{dlq}":
		return GetAtt(idDLQ, "QueueName")
	case "{cluster}":
		return Ref(idCluster)
	case "{service}":
		return GetAtt(sc.svc.ID+"Service", "Name")
	case "{loadBalancer}":
		return GetAtt(idALB, "LoadBalancerFullName")
	case "{targetGroup}":
		return GetAtt(sc.svc.ID+"TargetGroup", "TargetGroupFullName")
	case "{table}":
		return Ref(sc.table.ID)
	case "{stage}":
		return Ref("Stage")
	case "{deliveryStream}":
		return Ref(idFirehose)
	case "{eventsRuleDLQ}":
		return GetAtt(idRuleDLQ, "QueueName")
	case "{serviceName}":
		return sc.svc.Name
	}
	return nil
}

// expression is cw's metric math with the stack's values for
// deploy/alarm's expression placeholders: {workerMaxTasks}, the
// worker's task maximum (its parameter).
func (s *Spec) expression(expr string) any {
	const workerMax = "{workerMaxTasks}"
	if !strings.Contains(expr, workerMax) {
		return expr
	}
	return Sub(strings.ReplaceAll(expr, workerMax, "${"+maxParam(s.worker())+"}"))
}

// metric is a CloudWatch Metric: namespace, name and dimensions, with sv
// the service {service} and {targetGroup} stand for.
func (s *Spec) metric(m alarm.Metric, sv Service) map[string]any {
	return s.scopedMetric(m, scope{svc: sv})
}

// scopedMetric is metric in scope sc.
func (s *Spec) scopedMetric(m alarm.Metric, sc scope) map[string]any {
	out := map[string]any{"Namespace": m.Namespace, "MetricName": m.Name}
	if len(m.Dimensions) > 0 {
		out["Dimensions"] = s.dimensions(m.Dimensions, sc)
	}
	return out
}

// alarms turns every alert of deploy/alarm into a CloudWatch alarm on its
// signal's CloudWatch form, notifying the alert topic, with the runbook's
// address in the description. An alert whose metrics name a target group
// gets one alarm per public service, one whose metrics name a table one
// alarm per table; the others one alarm ({service} is the worker).
func (s *Spec) alarms(t *Template) {
	t.add(idAlertTopic, Resource{Type: "AWS::SNS::Topic", Properties: map[string]any{
		"TopicName": Sub("pacer-${Stage}-alerts"), "Tags": tags("alarms"),
	}})
	t.Conditions[condAlertEmail] = map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{Ref(paramAlertEmail), ""}}}}
	t.add(idAlertEmail, Resource{Type: "AWS::SNS::Subscription", Condition: condAlertEmail, Properties: map[string]any{
		"TopicArn": Ref(idAlertTopic), "Protocol": "email", "Endpoint": Ref(paramAlertEmail),
	}})
	signals := map[string]alarm.CloudWatch{}
	for _, sig := range alarm.Signals(s.Alarms) {
		signals[sig.Record] = sig.CloudWatch
	}
	for _, a := range alarm.Alerts(s.Alarms) {
		cw, ok := signals[a.Signal]
		if !ok || cw.Expression == "" {
			panic("stack: alert " + a.Name + " has no CloudWatch signal")
		}
		for _, sc := range s.alarmScopes(cw) {
			id, name := a.Name+"Alarm", Sub("pacer-${Stage}-"+a.Name)
			switch {
			case sc.table.ID != "":
				id, name = a.Name+sc.table.ID+"Alarm", Sub("pacer-${Stage}-"+a.Name+"-"+sc.table.ID)
			case sc.svc.Public:
				id, name = a.Name+sc.svc.ID+"Alarm", Sub("pacer-${Stage}-"+a.Name+"-"+sc.svc.Name)
			}
			t.add(id, Resource{Type: "AWS::CloudWatch::Alarm", Properties: s.alarmProperties(a, cw, sc, name)})
		}
	}
}

// alarmScopes are the scopes of cw's alarms: a public service each for
// {targetGroup}, a table each for {table}, else the worker alone.
func (s *Spec) alarmScopes(cw alarm.CloudWatch) []scope {
	uses := map[string]bool{}
	for _, m := range cw.Metrics {
		for _, v := range m.Dimensions {
			uses[v] = true
		}
	}
	var out []scope
	switch {
	case uses["{targetGroup}"]:
		for _, sv := range s.Services {
			if sv.Public {
				out = append(out, scope{svc: sv})
			}
		}
	case uses["{table}"]:
		for _, tb := range s.Tables {
			out = append(out, scope{svc: s.worker(), table: tb})
		}
	default:
		out = append(out, scope{svc: s.worker()})
	}
	return out
}

// AlarmPeriods is how many periods of p an alert held for d waits: d / p
// rounded up, at least 1.
func AlarmPeriods(d, p time.Duration) int {
	return max(1, int(math.Ceil(float64(d)/float64(p))))
}

// alarmProperties is the alarm of a in scope sc: cw's metric math,
// compared with a's threshold over the periods a.For spans, missing data
// breaching only for a metric Pacer emits on a timer.
func (s *Spec) alarmProperties(a alarm.Alert, cw alarm.CloudWatch, sc scope, name any) map[string]any {
	period := int(cw.Period / time.Second)
	var metrics []any
	for _, m := range cw.Metrics {
		stat := map[string]any{"Period": period, "Stat": m.Stat, "Metric": s.scopedMetric(m, sc)}
		if m.Unit != "" {
			stat["Unit"] = m.Unit
		}
		metrics = append(metrics, map[string]any{"Id": m.ID, "ReturnData": false, "MetricStat": stat})
	}
	metrics = append(metrics, map[string]any{"Id": "signal", "Expression": s.expression(cw.Expression), "Label": a.Signal, "ReturnData": true})
	op := map[string]string{">": "GreaterThanThreshold", "<": "LessThanThreshold"}[a.Op]
	if op == "" {
		panic("stack: alert " + a.Name + " has operator " + a.Op)
	}
	n := AlarmPeriods(a.For, cw.Period)
	missing := "notBreaching"
	if cw.MissingIsBreaching {
		missing = "breaching"
	}
	desc := fmt.Sprintf("[%s] %s Runbook: %s", a.Severity, a.Description, a.RunbookURL(s.Alarms.RunbookBase))
	return map[string]any{
		"AlarmName": name, "AlarmDescription": desc,
		"Metrics": metrics, "ComparisonOperator": op, "Threshold": a.Threshold,
		"EvaluationPeriods": n, "DatapointsToAlarm": n, "TreatMissingData": missing,
		"AlarmActions": []any{Ref(idAlertTopic)}, "OKActions": []any{Ref(idAlertTopic)},
	}
}
