package alarm

import (
	"fmt"
	"strconv"
	"time"
)

// Signal records, as the alerts refer to them.
const (
	BacklogPerWorker = "pacer:queue_backlog_per_worker"
	QueueStalled     = "pacer:queue_stalled"
	DLQDelta         = "pacer:dlq_messages:delta"
	HTTP5xxRatio     = "service:pacer_http_5xx:ratio_rate"
	FinalRatio       = "pacer:worker_final:ratio_rate"
	InvariantOK      = "pacer:capacity_invariant_ok:min"
	APIUp            = "service:up:sum"
	LB5xxRatio       = "cloudwatch:lb_5xx:ratio"
	QueueAge         = "cloudwatch:queue_oldest_message_age:max"
	DLQAge           = "cloudwatch:dlq_oldest_message_age:max"
	DynamoDBThrottle = "pacer:dynamodb_throttled:rate"
	PublisherLag     = "pacer:events_publisher_lag_seconds:max"
	DeliveryFailing  = "cloudwatch:events_delivery_failing"
	RuleDLQDepth     = "cloudwatch:events_rule_dlq_messages:max"
	APILatencyP99    = "service:pacer_http_request_duration_seconds:p99"
	UnhealthyTargets = "service:targets_unhealthy:count"
	Unauth401Ratio   = "service:pacer_http_401:ratio_rate"
	Client4xxRatio   = "service:pacer_http_4xx_client:ratio_rate"
	DynamoDBErrors   = "pacer:dynamodb_server_errors:ratio_rate"
	WorkersAtMax     = "pacer:workers_at_max"
	AuthKeys         = "pacer:auth_keys:min"
	AuthKeyFailing   = "pacer:auth_key_set_refresh_failed:max"
	HumanCheckRatio  = "pacer:human_checks_unavailable:ratio_rate"
)

// Signals returns the recording rules in evaluation order (each may use the
// ones before it), and the CloudWatch-only signals.
func Signals(c Config) []Signal {
	var out []Signal
	out = append(out, backlogSignals(c)...)
	out = append(out, queueHealthSignals(c)...)
	out = append(out, outcomeSignals(c)...)
	out = append(out, apiSignals(c)...)
	out = append(out, problemSignals(c)...)
	out = append(out, queueAgeSignals(c)...)
	out = append(out, tableSignals(c)...)
	out = append(out, workerPoolSignals(c)...)
	out = append(out, providerSignals(c)...)
	return append(out, analyticsSignals(c)...)
}

// backlogSignals are the queue's depths and the workers running, and the
// backlog per worker the autoscaler tracks from them.
func backlogSignals(c Config) []Signal {
	period := time.Minute
	return []Signal{
		{
			Record: "queue_state:pacer_queue_messages:max",
			Expr:   "max by (queue, state) (pacer_queue_messages)",
			Help:   "SQS depth by queue and state, counted once however many processes export it (they all read the same queue).",
		},
		{
			Record: "queue:pacer_queue_messages:sum",
			Expr:   "sum by (queue) (queue_state:pacer_queue_messages:max)",
			Help:   "SQS depth by queue, all states.",
		},
		{
			Record: "pacer:workers_running",
			Expr:   fmt.Sprintf(`max(pacer_workers_running) or count(up{job=%q} == 1) or vector(0)`, c.WorkerJob),
			Help:   "Workers alive: the autoscaler's count, else the worker targets that are up, else 0.",
		},
		{
			Record: BacklogPerWorker,
			Expr:   `sum(queue_state:pacer_queue_messages:max{queue="main", state=~"visible|in_flight"}) / clamp_min(pacer:workers_running, 1)`,
			Help:   "Backlog (visible + in-flight messages of the main queue) per running worker: the autoscaler's tracked metric.",
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					sqsMetric("visible", "ApproximateNumberOfMessagesVisible", "{queue}"),
					sqsMetric("inflight", "ApproximateNumberOfMessagesNotVisible", "{queue}"),
					{ID: "tasks", Namespace: "ECS/ContainerInsights", Name: "RunningTaskCount", Stat: "Average",
						Dimensions: map[string]string{"ClusterName": "{cluster}", "ServiceName": "{service}"}},
				},
				Expression: "(visible + inflight) / IF(tasks > 1, tasks, 1)",
				Period:     period,
			},
		},
	}
}

// queueHealthSignals say whether the main queue drains (QueueStalled) and
// whether messages reach the DLQ (DLQDelta).
func queueHealthSignals(c Config) []Signal {
	w := promDuration(c.RateWindow)
	return []Signal{
		{
			Record: QueueStalled,
			Expr: fmt.Sprintf(`(sum(queue_state:pacer_queue_messages:max{queue="main", state="visible"}) > bool 0)`+
				` * ((sum(rate(pacer_worker_messages_total{outcome!~"retryable|waiting"}[%s])) or vector(0)) == bool 0)`, w),
			Help: "1 while the main queue has visible messages and no worker finished one (succeeded, rejected or final) in the window, else 0.",
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					sqsMetric("visible", "ApproximateNumberOfMessagesVisible", "{queue}"),
					{ID: "deleted", Namespace: "AWS/SQS", Name: "NumberOfMessagesDeleted", Stat: "Sum", Dimensions: map[string]string{"QueueName": "{queue}"}},
				},
				Expression: "IF(visible > 0 AND deleted == 0, 1, 0)",
				Period:     c.RateWindow,
			},
		},
		{
			Record: DLQDelta,
			Expr:   fmt.Sprintf(`sum(delta(queue:pacer_queue_messages:sum{queue="dlq"}[%s]))`, w),
			Help:   "Change of the DLQ's depth over the window: above 0 when messages arrived (net of redrives).",
			CloudWatch: CloudWatch{
				Metrics:    []Metric{sqsMetric("dlq", "ApproximateNumberOfMessagesVisible", "{dlq}")},
				Expression: "DIFF(dlq)",
				Period:     c.RateWindow,
			},
		},
	}
}

// outcomeSignals are the shares of failed answers and of FAILED_FINAL
// messages, and the capacity invariant.
func outcomeSignals(c Config) []Signal {
	w := promDuration(c.RateWindow)
	period := time.Minute
	return []Signal{
		{
			Record: HTTP5xxRatio,
			Expr: fmt.Sprintf(`sum by (service) (rate(pacer_http_request_duration_seconds_count{code_class="5xx"}[%s]))`+
				` / (sum by (service) (rate(pacer_http_request_duration_seconds_count[%s])) > %s)`, w, w, num(c.HTTPMinRate)),
			Help: fmt.Sprintf("Share of a service's answers that are 5xx; absent below %s requests/s, where a few requests are noise.", num(c.HTTPMinRate)),
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					{ID: "errors", Namespace: "AWS/ApplicationELB", Name: "HTTPCode_Target_5XX_Count", Stat: "Sum",
						Dimensions: map[string]string{"LoadBalancer": "{loadBalancer}", "TargetGroup": "{targetGroup}"}},
					{ID: "requests", Namespace: "AWS/ApplicationELB", Name: "RequestCount", Stat: "Sum",
						Dimensions: map[string]string{"LoadBalancer": "{loadBalancer}", "TargetGroup": "{targetGroup}"}},
				},
				Expression: fmt.Sprintf("IF(requests > %s, errors / requests, 0)", num(c.HTTPMinRate*c.RateWindow.Seconds())),
				Period:     c.RateWindow,
			},
		},
		{
			Record: FinalRatio,
			Expr: fmt.Sprintf(`sum(rate(pacer_worker_messages_total{outcome="final"}[%s]))`+
				` / (sum(rate(pacer_worker_messages_total{outcome!~"retryable|waiting"}[%s])) > %s)`, w, w, num(c.WorkerMinRate)),
			Help: fmt.Sprintf("Share of finished messages that ended FAILED_FINAL; absent below %s finished messages/s.", num(c.WorkerMinRate)),
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					customMetric("final", "pacer_worker_messages_total", "Sum", "Count", map[string]string{"outcome": "final"}),
					customMetric("succeeded", "pacer_worker_messages_total", "Sum", "Count", map[string]string{"outcome": "succeeded"}),
					customMetric("rejected", "pacer_worker_messages_total", "Sum", "Count", map[string]string{"outcome": "rejected"}),
				},
				Expression: fmt.Sprintf("IF(final + succeeded + rejected > %s, final / (final + succeeded + rejected), 0)", num(c.WorkerMinRate*c.RateWindow.Seconds())),
				Period:     c.RateWindow,
			},
		},
		{
			Record: InvariantOK,
			Expr:   "min(pacer_event_capacity_invariant_ok)",
			Help:   "0 if any open FIRST_COME event has capacityTotal - capacityRemaining != SUCCEEDED, else 1.",
			CloudWatch: CloudWatch{
				Metrics:    []Metric{customMetric("ok", "pacer_event_capacity_invariant_ok", "Minimum", "None", nil)},
				Expression: "ok",
				Period:     period,
				// The APIs write the check's result every 30 s, 1 or 0; a
				// minute without it is a check that failed or an API
				// that stopped writing: the invariant is not known to
				// hold.
				MissingIsBreaching: true,
			},
		},
	}
}

// sqsMetric is the Maximum of the SQS metric name for queue.
func sqsMetric(id, name, queue string) Metric {
	return Metric{ID: id, Namespace: "AWS/SQS", Name: name, Stat: "Maximum", Dimensions: map[string]string{"QueueName": queue}}
}

// customMetric is one of Pacer's own metrics (Namespace), by stat, unit
// and dimensions, with the stage's dimension added.
func customMetric(id, name, stat, unit string, dims map[string]string) Metric {
	d := map[string]string{StageDimension: "{stage}"}
	for k, v := range dims {
		d[k] = v
	}
	return Metric{ID: id, Namespace: Namespace, Name: name, Stat: stat, Unit: unit, Dimensions: d}
}

// Alerts returns the alerts, each on one of Signals(c).
func Alerts(c Config) []Alert {
	var out []Alert
	out = append(out, coreAlerts(c)...)
	out = append(out, apiAlerts(c)...)
	out = append(out, problemAlerts(c)...)
	out = append(out, queueAgeAlerts(c)...)
	out = append(out, tableAlerts(c)...)
	out = append(out, workerPoolAlerts(c)...)
	out = append(out, providerAlerts(c)...)
	return append(out, analyticsAlerts(c)...)
}

// coreAlerts are the queue's, the outcomes' and the invariant's.
func coreAlerts(c Config) []Alert {
	target := c.Scaling.TargetBacklogPerWorker()
	return []Alert{
		{
			Name: "QueueBacklogPerWorkerHigh", Signal: BacklogPerWorker, Op: ">", Threshold: target, For: c.BacklogFor, Severity: Warning,
			Summary: fmt.Sprintf("Backlog per worker is {{ $value | humanize }}, above the target %s for %s", num(target), promDuration(c.BacklogFor)),
			Description: fmt.Sprintf("Each running worker has more messages than it clears within the acceptable latency (%s), and scaling has not caught up: "+
				"participations wait longer than promised. Workers may be at their maximum (%d) or failing to start.", promDuration(c.Scaling.AcceptableLatency), c.Scaling.Max),
		},
		{
			Name: "QueueStalled", Signal: QueueStalled, Op: ">", Threshold: 0, For: c.StalledFor, Severity: Critical,
			Summary:     fmt.Sprintf("Messages wait in the main queue and no worker finished one for %s", promDuration(c.StalledFor)),
			Description: "Workers are stopped, cannot reach SQS or DynamoDB, or fail every message retryably: participations stay QUEUED and the queue grows.",
		},
		{
			Name: "DLQInflow", Signal: DLQDelta, Op: ">", Threshold: 0, Severity: Critical,
			Summary:     fmt.Sprintf("{{ $value | humanize }} more messages in the DLQ than %s ago", promDuration(c.RateWindow)),
			Description: "Messages were received maxReceiveCount times without finishing and moved to the dead-letter queue: each is a participation that stays unfinished until it is redriven.",
		},
		{
			Name: "HTTP5xxRatioHigh", Signal: HTTP5xxRatio, Op: ">", Threshold: c.HTTP5xxRatio, For: c.HTTP5xxFor, Severity: Critical,
			Summary:     "{{ $labels.service }} answers {{ $value | humanizePercentage }} of its requests with 5xx",
			Description: fmt.Sprintf("More than %s of the service's answers are server errors: a dependency (DynamoDB, SQS, Postgres) fails or the service is overloaded.", pct(c.HTTP5xxRatio)),
		},
		{
			Name: "WorkerFinalFailureRatioHigh", Signal: FinalRatio, Op: ">", Threshold: c.FinalRatio, For: c.FinalFor, Severity: Warning,
			Summary:     "{{ $value | humanizePercentage }} of finished messages ended FAILED_FINAL",
			Description: fmt.Sprintf("More than %s of the messages workers finish fail non-retryably (bad data or a bug, not an outage): those participations are lost to their users.", pct(c.FinalRatio)),
		},
		{
			Name: "CapacityInvariantBroken", Signal: InvariantOK, Op: "<", Threshold: 1, For: c.InvariantFor, Severity: Critical,
			Summary:     "An open FIRST_COME event has capacityTotal - capacityRemaining != SUCCEEDED",
			Description: "Seats taken and successful requests disagree: an event may be oversold or seats lost. Stop the sale before more users are affected.",
		},
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func pct(v float64) string { return strconv.FormatFloat(v*100, 'g', -1, 64) + "%" }

// promDuration formats d as Prometheus writes durations (10m, 1h, 30s).
func promDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
}
