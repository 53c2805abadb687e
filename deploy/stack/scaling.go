package stack

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/pacerhq/pacer/sdk/autoscale"
)

// Scaling: which ECS services scale, on what, and how fast
// (docs/autoscaling.md).
//
// No autoscaled service has an ECS DesiredCount. With one, every stack
// update sets the service back to it, so a deploy during a sale would
// stop the tasks a spike scaled out; without it, an update keeps the
// running count. On first create ECS starts the service with 1 task
// (DesiredCount's default for a new service), then registering its
// scalable target moves the count into MinCapacity..MaxCapacity.
//
// The queue worker's count follows the workers' own figure,
// sdk/autoscale's held recommendation published every 5 s as a
// high-resolution metric (autoscale.DesiredMetricName): two step scaling
// policies (ExactCapacity) on 10-second alarms set it, out within a
// minute of a backlog and back to Min once the recommendation has been
// Min for the scale-in window. Target tracking on SQS's one-minute
// metrics (backlog per task) stays as the fallback when the workers'
// metric is missing. Each API has two target tracking policies:
// CPU on ECS's 20-second metric for a spike, ALB requests per task for the
// steady state. For a sale known in advance, PrescaleAt..PrescaleUntil
// raise every autoscaled service's minimum by scheduled actions.

// Logical ids, parameters and conditions of the scaling.
const (
	idWorkerTracking   = "WorkerScalingPolicy"
	idWorkerSpike      = "WorkerSpikeScalingPolicy"
	idWorkerSpikeAlarm = "WorkerSpikeAlarm"
	idWorkerSpikeEnd   = "WorkerSpikeEndScalingPolicy"
	idWorkerSpikeEndAl = "WorkerSpikeEndAlarm"
	paramPrescaleAt    = "PrescaleAt"
	paramPrescaleUntil = "PrescaleUntil"
	condPrescale       = "HasPrescale"
)

// The policies' timing, which the spike model (spike.go) reads too.
const (
	// spikeAlarmPeriod is the worker spike alarm's period: a
	// high-resolution alarm, evaluated every 10 seconds.
	spikeAlarmPeriod = 10 * time.Second
	// The spike alarm fires on spikeAlarmDatapoints breaching datapoints
	// of the last spikeAlarmPeriods ("M out of N", as AWS advises for
	// EMF metrics: a late datapoint does not hold it back).
	spikeAlarmPeriods    = 3
	spikeAlarmDatapoints = 1
	// spikeCooldown is the step policy's cooldown: a lower held
	// recommendation scales in at most once per cooldown.
	spikeCooldown = 60 * time.Second
	// scaleOutCooldown is the target tracking policies' scale-out
	// cooldown; apiScaleInCooldown the APIs' scale-in cooldown (the
	// worker's is Scaling.ScaleInWindow).
	scaleOutCooldown   = 60 * time.Second
	apiScaleInCooldown = 5 * time.Minute
	// apiCPUPeriod is the resolution of the APIs' CPU metric (the
	// service's Monitoring), which ...HighResolution policies read.
	apiCPUPeriod = 20 * time.Second
	// maxStepAdjustments is Application Auto Scaling's quota of step
	// adjustments per step scaling policy.
	maxStepAdjustments = 20
	// maxTasks bounds the task-count parameters (a typo guard).
	maxTasks = 100
)

// ecsScalingRole is Application Auto Scaling's service-linked role for ECS
// (created on first use).
const ecsScalingRole = "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/aws-service-role/ecs.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_ECSService"

// autoscaled reports whether sv's task count is Application Auto Scaling's.
func autoscaled(sv Service) bool { return sv.Scaled || sv.Autoscale != nil }

func minParam(sv Service) string       { return sv.ID + "MinTasks" }
func maxParam(sv Service) string       { return sv.ID + "MaxTasks" }
func prescaleParam(sv Service) string  { return sv.ID + "PrescaleTasks" }
func scalableTarget(sv Service) string { return sv.ID + "ScalableTarget" }

// bounds is sv's default task range: the worker's from Scaling, an API's
// from its Autoscale.
func (s *Spec) bounds(sv Service) (lo, hi int) {
	if sv.Scaled {
		return s.Scaling.Min, s.Scaling.Max
	}
	return sv.Autoscale.Min, sv.Autoscale.Max
}

// scalingParameters adds each autoscaled service's task range and
// pre-scale count, and the pre-scale window.
func (s *Spec) scalingParameters(p map[string]Parameter) {
	count := func(def int, desc string) Parameter {
		return Parameter{Type: "Number", Default: str(strconv.Itoa(def)), Description: desc, MinValue: num(1), MaxValue: num(maxTasks),
			ConstraintDescription: fmt.Sprintf("a task count from 1 to %d", maxTasks)}
	}
	for _, sv := range s.Services {
		if !autoscaled(sv) {
			continue
		}
		lo, hi := s.bounds(sv)
		p[minParam(sv)] = count(lo, "Fewest "+sv.Name+" tasks (its scalable target's MinCapacity); raising it starts tasks at once")
		p[maxParam(sv)] = count(hi, "Most "+sv.Name+" tasks (MaxCapacity)")
		p[prescaleParam(sv)] = count(lo, "Fewest "+sv.Name+" tasks from PrescaleAt to PrescaleUntil (a sale's opening); unused without PrescaleAt")
	}
	when := `(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})?`
	p[paramPrescaleAt] = Parameter{Type: "String", Default: str(""), AllowedPattern: "^" + when + "$",
		ConstraintDescription: "empty, or a UTC time such as 2026-11-27T08:55:00",
		Description: "UTC time (yyyy-mm-ddThh:mm:ss) from which each autoscaled service keeps at least its <ID>PrescaleTasks: " +
			"5 minutes or more before a sale opens, so the tasks are up when it does (docs/autoscaling.md); empty: no pre-scale"}
	p[paramPrescaleUntil] = Parameter{Type: "String", Default: str(""), AllowedPattern: "^" + when + "$",
		ConstraintDescription: "empty, or a UTC time such as 2026-11-27T10:00:00",
		Description:           "UTC time at which the minimums return to <ID>MinTasks; required with PrescaleAt"}
}

// scalingConditions adds HasPrescale and the rules that the pre-scale
// window is given whole or not at all.
func (s *Spec) scalingConditions(t *Template) {
	noStart := map[string]any{"Fn::Equals": []any{Ref(paramPrescaleAt), ""}}
	noEnd := map[string]any{"Fn::Equals": []any{Ref(paramPrescaleUntil), ""}}
	t.Conditions[condPrescale] = map[string]any{"Fn::Not": []any{noStart}}
	t.Rules["PrescaleWindow"] = map[string]any{"RuleCondition": map[string]any{"Fn::Not": []any{noStart}}, "Assertions": []any{
		map[string]any{"Assert": map[string]any{"Fn::Not": []any{noEnd}}, "AssertDescription": "With PrescaleAt, PrescaleUntil is required: when the minimums return"}}}
	t.Rules["NoPrescaleEndWithoutStart"] = map[string]any{"RuleCondition": noStart, "Assertions": []any{
		map[string]any{"Assert": noEnd, "AssertDescription": "PrescaleUntil ends a pre-scale: set PrescaleAt too, or leave both empty"}}}
}

// scaling adds sv's scalable target and policies, if it autoscales.
func (s *Spec) scaling(t *Template, sv Service) {
	if !autoscaled(sv) {
		return
	}
	s.scalableTarget(t, sv)
	if sv.Scaled {
		s.workerTracking(t, sv)
		s.workerSpike(t, sv)
		return
	}
	s.apiPolicies(t, sv)
}

// scalableTarget adds sv's scalable target: its task range from its
// parameters and, with HasPrescale, the scheduled actions that raise its
// minimum for the pre-scale window.
func (s *Spec) scalableTarget(t *Template, sv Service) {
	action := func(name, at string, min any) map[string]any {
		return map[string]any{"ScheduledActionName": name, "Schedule": Sub("at(${" + at + "})"),
			"ScalableTargetAction": map[string]any{"MinCapacity": min}}
	}
	t.add(scalableTarget(sv), Resource{Type: "AWS::ApplicationAutoScaling::ScalableTarget", Properties: map[string]any{
		"MinCapacity": Ref(minParam(sv)), "MaxCapacity": Ref(maxParam(sv)),
		"ResourceId":        Join("/", "service", Ref(idCluster), GetAtt(sv.ID+"Service", "Name")),
		"ScalableDimension": "ecs:service:DesiredCount", "ServiceNamespace": "ecs",
		"RoleARN": Sub(ecsScalingRole),
		"ScheduledActions": If(condPrescale, []any{
			action("prescale", paramPrescaleAt, Ref(prescaleParam(sv))),
			action("prescale-end", paramPrescaleUntil, Ref(minParam(sv))),
		}, NoValue),
	}})
}

// workerTracking is the worker's target tracking on backlog per task: the
// metric math of the QueueBacklogPerWorkerHigh signal, target
// Scaling.TargetBacklogPerWorker, scale-in cooldown ScaleInWindow.
func (s *Spec) workerTracking(t *Template, sv Service) {
	sig := s.backlogSignal()
	var metrics []any
	for _, m := range sig.Metrics {
		metrics = append(metrics, map[string]any{
			"Id": m.ID, "ReturnData": false,
			"MetricStat": map[string]any{"Stat": m.Stat, "Metric": s.metric(m, sv)},
		})
	}
	metrics = append(metrics, map[string]any{"Id": "backlogpertask", "Expression": sig.Expression, "Label": "Backlog per task", "ReturnData": true})
	t.add(idWorkerTracking, Resource{Type: "AWS::ApplicationAutoScaling::ScalingPolicy", Properties: map[string]any{
		"PolicyName": Sub("pacer-${Stage}-worker-backlog-per-task"), "PolicyType": "TargetTrackingScaling",
		"ScalingTargetId": Ref(scalableTarget(sv)),
		"TargetTrackingScalingPolicyConfiguration": map[string]any{
			"TargetValue":                   s.Scaling.TargetBacklogPerWorker(),
			"ScaleInCooldown":               int(s.Scaling.ScaleInWindow / time.Second),
			"ScaleOutCooldown":              int(scaleOutCooldown / time.Second),
			"CustomizedMetricSpecification": map[string]any{"Metrics": metrics},
		},
	}})
}

// workerSpike adds the worker's spike policies and their alarms on the
// workers' published desired count: above Scaling.Min in one 10-second
// datapoint, the pool is set to exactly that count (spikeSteps); at
// Scaling.Min in all three, back to Min. The count is held for the
// scale-in window by the workers (autoscale.Controller.Hold), so the pool
// comes down as the local controller's does.
func (s *Spec) workerSpike(t *Template, sv Service) {
	policy := func(id, name string, steps []any) {
		t.add(id, Resource{Type: "AWS::ApplicationAutoScaling::ScalingPolicy", Properties: map[string]any{
			"PolicyName": Sub("pacer-${Stage}-worker-" + name), "PolicyType": "StepScaling",
			"ScalingTargetId": Ref(scalableTarget(sv)),
			"StepScalingPolicyConfiguration": map[string]any{
				"AdjustmentType": "ExactCapacity", "MetricAggregationType": "Maximum",
				"Cooldown": int(spikeCooldown / time.Second), "StepAdjustments": steps,
			},
		}})
	}
	policy(idWorkerSpike, "spike", spikeSteps(s.Scaling.Min, s.Scaling.Max, Ref(maxParam(sv))))
	policy(idWorkerSpikeEnd, "spike-end", []any{map[string]any{"MetricIntervalUpperBound": 0.0, "ScalingAdjustment": s.Scaling.Min}})
	s.spikeAlarm(t, idWorkerSpikeAlarm, "worker-spike", "GreaterThanThreshold", spikeAlarmDatapoints, idWorkerSpike,
		fmt.Sprintf("is above %d: the spike policy sets the worker count to it", s.Scaling.Min))
	s.spikeAlarm(t, idWorkerSpikeEndAl, "worker-spike-end", "LessThanOrEqualToThreshold", spikeAlarmPeriods, idWorkerSpikeEnd,
		fmt.Sprintf("is %d: the spike-end policy sets the worker count back to it", s.Scaling.Min))
}

// spikeAlarm adds one of the worker's scaling alarms on the workers'
// published desired count against Scaling.Min: datapoints of the last
// spikeAlarmPeriods 10-second ones must breach, and the alarm runs policy.
func (s *Spec) spikeAlarm(t *Template, id, name, op string, datapoints int, policy, what string) {
	t.add(id, Resource{Type: "AWS::CloudWatch::Alarm", Properties: map[string]any{
		"AlarmName": Sub("pacer-${Stage}-" + name),
		"AlarmDescription": fmt.Sprintf("Scaling, not an alert: the workers' %s (sdk/autoscale, published every %d s) %s (docs/autoscaling.md).",
			autoscale.DesiredMetricName, int(autoscale.PublishEvery/time.Second), what),
		"Namespace": autoscale.DesiredMetricNamespace, "MetricName": autoscale.DesiredMetricName,
		"Dimensions": []any{map[string]any{"Name": autoscale.DesiredMetricQueueDimension, "Value": GetAtt(idQueue, "QueueName")}},
		"Statistic":  "Maximum", "Period": int(spikeAlarmPeriod / time.Second),
		"EvaluationPeriods": spikeAlarmPeriods, "DatapointsToAlarm": datapoints,
		"ComparisonOperator": op, "Threshold": s.Scaling.Min,
		// No data (no worker publishing): no scaling from here; target
		// tracking still scales.
		"TreatMissingData": "missing",
		"AlarmActions":     []any{GetAtt(policy, "Arn")},
	}})
}

// spikeSteps are the spike policy's adjustments for an alarm whose
// threshold is min: for each desired count k from min+1 to max, the
// metric's excess over the threshold in [k-min-½, k-min+½) sets the count
// to exactly k; the first band starts at 0, the last is open-ended and
// sets the count to top (the stack's MaxCapacity: the metric is capped at
// max). With more counts than maxStepAdjustments, consecutive counts share
// a band, which sets the highest of them: never fewer tasks than asked.
func spikeSteps(min, max int, top any) []any {
	n := max - min
	bands := n
	if bands > maxStepAdjustments {
		bands = maxStepAdjustments
	}
	var steps []any
	lo := min + 1
	for i := 1; i <= bands; i++ {
		hi := min + int(math.Ceil(float64(i*n)/float64(bands)))
		step := map[string]any{"MetricIntervalLowerBound": float64(lo-min) - 0.5, "ScalingAdjustment": hi}
		if i == 1 {
			step["MetricIntervalLowerBound"] = 0.0
		}
		if i == bands {
			step["ScalingAdjustment"] = top
		} else {
			step["MetricIntervalUpperBound"] = float64(hi-min) + 0.5
		}
		steps = append(steps, step)
		lo = hi + 1
	}
	return steps
}

// apiPolicies adds an API's two target tracking policies: CPU on the
// service's 20-second metric, which reacts to a spike, and ALB requests
// per task (ResourceLabel: the load balancer's and the target group's
// full names), the steady state. It scales out when either asks and in
// only when both do.
func (s *Spec) apiPolicies(t *Template, sv Service) {
	a := sv.Autoscale
	tracking := func(id, name string, target float64, metric map[string]any) {
		t.add(id, Resource{Type: "AWS::ApplicationAutoScaling::ScalingPolicy", Properties: map[string]any{
			"PolicyName": Sub("pacer-${Stage}-" + sv.Name + "-" + name), "PolicyType": "TargetTrackingScaling",
			"ScalingTargetId": Ref(scalableTarget(sv)),
			"TargetTrackingScalingPolicyConfiguration": map[string]any{
				"TargetValue": target, "PredefinedMetricSpecification": metric,
				"ScaleOutCooldown": int(scaleOutCooldown / time.Second), "ScaleInCooldown": int(apiScaleInCooldown / time.Second),
			},
		}})
	}
	tracking(sv.ID+"CpuScalingPolicy", "cpu", a.CPUPercent,
		map[string]any{"PredefinedMetricType": "ECSServiceAverageCPUUtilizationHighResolution"})
	tracking(sv.ID+"RequestScalingPolicy", "requests", a.RequestsPerTask, map[string]any{
		"PredefinedMetricType": "ALBRequestCountPerTarget",
		"ResourceLabel":        Join("/", GetAtt(idALB, "LoadBalancerFullName"), GetAtt(sv.ID+"TargetGroup", "TargetGroupFullName")),
	})
}
