package alarm

import (
	"fmt"
	"strings"
	"time"
)

// apiSignals say whether each API has an instance up (a healthy target of
// the load balancer), how many of the load balancer's own answers are
// 5xx (it answers 502, 503 and 504 when targets fail, are missing or time
// out: errors no API process sees), how many of an API's instances fail
// beside healthy ones, and how long its answers take.
func apiSignals(c Config) []Signal {
	var up, unhealthy []string
	for _, job := range c.APIJobs {
		up = append(up, fmt.Sprintf(`label_replace(sum(up{job=%q}) or vector(0), "service", %q, "", "")`, job, job))
		unhealthy = append(unhealthy, fmt.Sprintf(`label_replace((count(up{job=%q} == 0) and on () count(up{job=%q} == 1)) or vector(0), "service", %q, "", "")`, job, job, job))
	}
	w := promDuration(c.RateWindow)
	elb := func(id, name string) Metric {
		return Metric{ID: id, Namespace: "AWS/ApplicationELB", Name: name, Stat: "Sum", Dimensions: map[string]string{"LoadBalancer": "{loadBalancer}"}}
	}
	minCount := num(c.HTTPMinRate * c.RateWindow.Seconds())
	return []Signal{
		{
			Record: APIUp,
			Expr:   strings.Join(up, " or "),
			Help:   "Instances up of each API (label service), 0 when none is or none is known.",
			CloudWatch: CloudWatch{
				Metrics: []Metric{{ID: "healthy", Namespace: "AWS/ApplicationELB", Name: "HealthyHostCount", Stat: "Minimum",
					Dimensions: map[string]string{"LoadBalancer": "{loadBalancer}", "TargetGroup": "{targetGroup}"}}},
				Expression: "healthy",
				Period:     time.Minute,
			},
		},
		{
			Record: LB5xxRatio,
			Help: fmt.Sprintf("Share of the load balancer's answers that it generated as 5xx itself; 0 below %s such errors in the window. "+
				"RequestCount leaves out requests refused before a target was chosen (a 503 for want of one), so they are added.", minCount),
			CloudWatch: CloudWatch{
				Metrics:    []Metric{elb("errors", "HTTPCode_ELB_5XX_Count"), elb("requests", "RequestCount")},
				Expression: fmt.Sprintf("IF(FILL(errors, 0) > %s, FILL(errors, 0) / (FILL(requests, 0) + FILL(errors, 0)), 0)", minCount),
				Period:     c.RateWindow,
			},
		},
		{
			Record: UnhealthyTargets,
			Expr:   strings.Join(unhealthy, " or "),
			Help:   "Instances of each API (label service) that are down while at least one is up; 0 when all are up, or none is (APINoHealthyTarget's case).",
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					targetGroupMetric("unhealthy", "UnHealthyHostCount", "Maximum"),
					targetGroupMetric("healthy", "HealthyHostCount", "Minimum"),
				},
				Expression: "IF(healthy >= 1, unhealthy, 0)",
				Period:     time.Minute,
			},
		},
		{
			Record: APILatencyP99,
			Expr: fmt.Sprintf(`histogram_quantile(0.99, sum by (service, le) (rate(pacer_http_request_duration_seconds_bucket[%s])))`+
				` and on (service) (sum by (service) (rate(pacer_http_request_duration_seconds_count[%s])) > %s)`, w, w, num(c.HTTPMinRate)),
			Help: fmt.Sprintf("99th percentile of a service's answer times in seconds (to the last byte); absent below %s requests/s. "+
				"CloudWatch: the target group's TargetResponseTime (to the answer's first byte).", num(c.HTTPMinRate)),
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					targetGroupMetric("latency", "TargetResponseTime", "p99"),
					targetGroupMetric("requests", "RequestCount", "Sum"),
				},
				Expression: fmt.Sprintf("IF(requests > %s, latency, 0)", minCount),
				Period:     c.RateWindow,
			},
		},
	}
}

// targetGroupMetric is a metric of an API's target group by stat.
func targetGroupMetric(id, name, stat string) Metric {
	return Metric{ID: id, Namespace: "AWS/ApplicationELB", Name: name, Stat: stat,
		Dimensions: map[string]string{"LoadBalancer": "{loadBalancer}", "TargetGroup": "{targetGroup}"}}
}

// apiAlerts fire when an API has no healthy instance or some unhealthy
// ones, the load balancer answers for the APIs with errors of its own, or
// an API answers slowly.
func apiAlerts(c Config) []Alert {
	return []Alert{
		{
			Name: "APINoHealthyTarget", Signal: APIUp, Op: "<", Threshold: 1, For: c.NoTargetFor, Severity: Critical,
			Summary: fmt.Sprintf("{{ $labels.service }} has had no healthy instance for %s", promDuration(c.NoTargetFor)),
			Description: "No instance of the API passes its health check (CloudWatch: no healthy target in its target group; Prometheus: no target up): " +
				"every request to it fails, with 503 from the load balancer. Its tasks stopped, crash on start, or fail /healthz.",
		},
		{
			Name: "LoadBalancer5xxRatioHigh", Signal: LB5xxRatio, Op: ">", Threshold: c.HTTP5xxRatio, For: c.HTTP5xxFor, Severity: Critical,
			Summary: "The load balancer answers {{ $value | humanizePercentage }} of requests with 5xx of its own",
			Description: fmt.Sprintf("More than %s of the load balancer's answers are errors it generated (502: a target closed the connection or answered garbage; "+
				"503: no healthy target; 504: a target timed out): users get errors the APIs never saw.", pct(c.HTTP5xxRatio)),
		},
		{
			Name: "APITargetsUnhealthy", Signal: UnhealthyTargets, Op: ">", Threshold: 0, For: c.UnhealthyTargetFor, Severity: Warning,
			Summary: fmt.Sprintf("{{ $labels.service }} has had {{ $value }} unhealthy instances beside healthy ones for %s", promDuration(c.UnhealthyTargetFor)),
			Description: fmt.Sprintf("Some instances of the API fail their health check (/healthz) while others pass: the healthy ones take all the traffic, "+
				"with less headroom for a spike. A target fails after 3 checks 10 s apart and ECS replaces its task within minutes, so %s "+
				"means the replacements fail too (a bad image on part of a deploy, one zone's network, tasks out of memory).", promDuration(c.UnhealthyTargetFor)),
		},
		{
			Name: "APILatencyHigh", Signal: APILatencyP99, Op: ">", Threshold: c.LatencyP99Max.Seconds(), For: c.LatencyFor, Severity: Warning,
			Summary: fmt.Sprintf("{{ $labels.service }} answers 1 request in 100 slower than {{ $value | humanizeDuration }}, above %s for %s",
				promDuration(c.LatencyP99Max), promDuration(c.LatencyFor)),
			Description: fmt.Sprintf("The 99th percentile of the API's answer times is above %s: an answer makes a few AWS calls of milliseconds each "+
				"(and Postgres queries for photo-api), so requests are waiting for CPU, a dependency is slow, or the SDK's retries back off. "+
				"Users wait, and clients' own timeouts fire before any 5xx shows.", promDuration(c.LatencyP99Max)),
		},
	}
}
