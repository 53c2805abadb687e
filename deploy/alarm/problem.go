package alarm

import (
	"fmt"
)

// ProblemMetric is the APIs' count of their error answers by service,
// class (unauthenticated: 401, rate_limited: 429, cancelled: 499, client:
// any other 4xx, server: 5xx), status and problem type: the one metric
// the alarms on what an API refuses read (services/internal/metrics).
const ProblemMetric = "pacer_http_problems_total"

// problemSignals are the shares of an API's answers in one problem class:
// in Prometheus over its own count of answers, in CloudWatch over its
// target group's RequestCount (the problems shipped by the API's tasks,
// with the service dimension).
func problemSignals(c Config) []Signal {
	ratio := func(record, class, what string) Signal {
		w := promDuration(c.RateWindow)
		minCount := num(c.HTTPMinRate * c.RateWindow.Seconds())
		return Signal{
			Record: record,
			Expr: fmt.Sprintf(`sum by (service) (rate(%s{class=%q}[%s]))`+
				` / (sum by (service) (rate(pacer_http_request_duration_seconds_count[%s])) > %s)`, ProblemMetric, class, w, w, num(c.HTTPMinRate)),
			Help: fmt.Sprintf("Share of a service's answers that are %s (%s class %s); absent below %s requests/s.", what, ProblemMetric, class, num(c.HTTPMinRate)),
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					customMetric("problems", ProblemMetric, "Sum", "Count", map[string]string{"service": "{serviceName}", "class": class}),
					targetGroupMetric("requests", "RequestCount", "Sum"),
				},
				Expression: fmt.Sprintf("IF(requests > %s, FILL(problems, 0) / requests, 0)", minCount),
				Period:     c.RateWindow,
			},
		}
	}
	return []Signal{
		ratio(Unauth401Ratio, "unauthenticated", "401 (a missing, invalid or expired token)"),
		ratio(Client4xxRatio, "client", "4xx other than 401, 429 and 499"),
	}
}

// problemAlerts fire when an API refuses an unusual share of what it is
// asked: 401s (tokens it cannot verify), or other 4xx.
func problemAlerts(c Config) []Alert {
	return []Alert{
		{
			Name: "HTTP401RatioHigh", Signal: Unauth401Ratio, Op: ">", Threshold: c.UnauthenticatedRatio, For: c.ProblemRatioFor, Severity: Warning,
			Summary: "{{ $labels.service }} answers {{ $value | humanizePercentage }} of its requests with 401",
			Description: fmt.Sprintf("More than %s of the API's answers refuse the caller's token for %s. Clients renew their tokens before they expire, "+
				"so this is tokens the API cannot verify: its key set is missing (AuthKeySetMissing), the identity provider or its audience, issuer or "+
				"keys changed, a front end sends no or stale tokens, or someone floods the API with bad ones.", pct(c.UnauthenticatedRatio), promDuration(c.ProblemRatioFor)),
		},
		{
			Name: "HTTP4xxRatioHigh", Signal: Client4xxRatio, Op: ">", Threshold: c.ClientErrorRatio, For: c.ProblemRatioFor, Severity: Warning,
			Summary: "{{ $labels.service }} answers {{ $value | humanizePercentage }} of its requests with a 4xx other than 401, 429 and 499",
			Description: fmt.Sprintf("More than %s of the API's answers refuse the request for %s (bad input, not found, forbidden, a conflict; "+
				"rate limits and cancellations are left out): a client sends what the API no longer takes (a release of either), or a scanner "+
				"probes it. The problem types say which: an expected refusal (early clicks before a sale opens) needs nothing.",
				pct(c.ClientErrorRatio), promDuration(c.ProblemRatioFor)),
		},
	}
}
