package alarm

import (
	"fmt"
	"strings"
	"time"
)

// apiSignals say whether each API has an instance up (a healthy target of
// the load balancer) and how many of the load balancer's own answers are
// 5xx (it answers 502, 503 and 504 when targets fail, are missing or time
// out: errors no API process sees).
func apiSignals(c Config) []Signal {
	var up []string
	for _, job := range c.APIJobs {
		up = append(up, fmt.Sprintf(`label_replace(sum(up{job=%q}) or vector(0), "service", %q, "", "")`, job, job))
	}
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
	}
}

// apiAlerts fire when an API has no healthy instance, or the load balancer
// answers for the APIs with errors of its own.
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
	}
}
