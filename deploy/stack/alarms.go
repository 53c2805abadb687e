package stack

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
)

const idAlertTopic = "AlertTopic"

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

// dimensions fills deploy/alarm's placeholders ({queue}, {dlq},
// {cluster}, {service}, {loadBalancer}, {targetGroup}) with the stack's
// resources; sv is the service {service} and {targetGroup} stand for.
func (s *Spec) dimensions(dims map[string]string, sv Service) []any {
	names := make([]string, 0, len(dims))
	for k := range dims {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []any
	for _, name := range names {
		var v any
		switch val := dims[name]; val {
		case "{queue}":
			v = GetAtt(idQueue, "QueueName")
		case "{dlq}":
			v = GetAtt(idDLQ, "QueueName")
		case "{cluster}":
			v = Ref(idCluster)
		case "{service}":
			v = GetAtt(sv.ID+"Service", "Name")
		case "{loadBalancer}":
			v = GetAtt(idALB, "LoadBalancerFullName")
		case "{targetGroup}":
			v = GetAtt(sv.ID+"TargetGroup", "TargetGroupFullName")
		default:
			if strings.HasPrefix(val, "{") {
				panic(fmt.Sprintf("stack: unknown dimension placeholder %s", val))
			}
			v = val
		}
		out = append(out, map[string]any{"Name": name, "Value": v})
	}
	return out
}

// metric is a CloudWatch Metric: namespace, name and dimensions.
func (s *Spec) metric(m alarm.Metric, sv Service) map[string]any {
	out := map[string]any{"Namespace": m.Namespace, "MetricName": m.Name}
	if len(m.Dimensions) > 0 {
		out["Dimensions"] = s.dimensions(m.Dimensions, sv)
	}
	return out
}

// alarms turns every alert of deploy/alarm into a CloudWatch alarm on its
// signal's CloudWatch form, notifying the alert topic, with the runbook's
// address in the description. An alert whose metrics name a service
// ({service} or {targetGroup}) gets one alarm per service it applies to:
// the worker for {service}, each public service for {targetGroup}.
func (s *Spec) alarms(t *Template) {
	t.add(idAlertTopic, Resource{Type: "AWS::SNS::Topic", Properties: map[string]any{
		"TopicName": Sub("pacer-${Stage}-alerts"), "Tags": tags("alarms"),
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
		for _, sv := range s.alarmTargets(cw) {
			id, name := a.Name+"Alarm", Sub("pacer-${Stage}-"+a.Name)
			if sv.Public {
				id, name = a.Name+sv.ID+"Alarm", Sub("pacer-${Stage}-"+a.Name+"-"+sv.Name)
			}
			t.add(id, Resource{Type: "AWS::CloudWatch::Alarm", Properties: s.alarmProperties(a, cw, sv, name)})
		}
	}
}

func (s *Spec) alarmTargets(cw alarm.CloudWatch) []Service {
	perTG := false
	for _, m := range cw.Metrics {
		for _, v := range m.Dimensions {
			perTG = perTG || v == "{targetGroup}"
		}
	}
	if !perTG {
		return []Service{s.worker()}
	}
	var out []Service
	for _, sv := range s.Services {
		if sv.Public {
			out = append(out, sv)
		}
	}
	return out
}

// AlarmPeriods is how many periods of p an alert held for d waits: d / p
// rounded up, at least 1.
func AlarmPeriods(d, p time.Duration) int {
	return max(1, int(math.Ceil(float64(d)/float64(p))))
}

func (s *Spec) alarmProperties(a alarm.Alert, cw alarm.CloudWatch, sv Service, name any) map[string]any {
	period := int(cw.Period / time.Second)
	var metrics []any
	for _, m := range cw.Metrics {
		metrics = append(metrics, map[string]any{
			"Id": m.ID, "ReturnData": false,
			"MetricStat": map[string]any{"Period": period, "Stat": m.Stat, "Metric": s.metric(m, sv)},
		})
	}
	metrics = append(metrics, map[string]any{"Id": "signal", "Expression": cw.Expression, "Label": a.Signal, "ReturnData": true})
	op := map[string]string{">": "GreaterThanThreshold", "<": "LessThanThreshold"}[a.Op]
	if op == "" {
		panic("stack: alert " + a.Name + " has operator " + a.Op)
	}
	n := AlarmPeriods(a.For, cw.Period)
	desc := fmt.Sprintf("[%s] %s Runbook: %s", a.Severity, a.Description, a.RunbookURL(s.Alarms.RunbookBase))
	return map[string]any{
		"AlarmName": name, "AlarmDescription": desc,
		"Metrics": metrics, "ComparisonOperator": op, "Threshold": a.Threshold,
		"EvaluationPeriods": n, "DatapointsToAlarm": n, "TreatMissingData": "notBreaching",
		"AlarmActions": []any{Ref(idAlertTopic)}, "OKActions": []any{Ref(idAlertTopic)},
	}
}
