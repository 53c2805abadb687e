package alarm

import (
	"fmt"
	"time"
)

// throttleWindow is the rate window of throttled calls: short, so that a
// blip is over before ThrottleFor, and two scrapes long at Prometheus's
// default interval (1m).
const throttleWindow = 2 * time.Minute

// tableSignals are DynamoDB's system errors, as the processes' calls met
// them (on AWS too: DynamoDB publishes SystemErrors per table and
// operation, more operations than an alarm may read), and its throttling:
// per table in CloudWatch (its read and write throttle events), and in
// Prometheus the calls that still failed throttled after the SDK's
// retries (the processes do not label their calls by table).
func tableSignals(c Config) []Signal {
	events := func(id, name string) Metric {
		return Metric{ID: id, Namespace: "AWS/DynamoDB", Name: name, Stat: "Sum", Dimensions: map[string]string{"TableName": "{table}"}}
	}
	calls := func(id, outcome string) Metric {
		return customMetric(id, "pacer_aws_calls_total", "Sum", "Count", map[string]string{"service_name": "dynamodb", "outcome": outcome})
	}
	w := promDuration(c.RateWindow)
	return []Signal{{
		Record: DynamoDBErrors,
		Expr: fmt.Sprintf(`sum(rate(pacer_aws_calls_total{service_name="dynamodb", outcome="server_error"}[%s]))`+
			` / (sum(rate(pacer_aws_calls_total{service_name="dynamodb"}[%s])) > %s)`, w, w, num(c.DynamoDBMinRate)),
		Help: fmt.Sprintf("Share of DynamoDB calls that failed with a 5xx (DynamoDB's system errors) after the SDK's retries; absent below %s calls/s.", num(c.DynamoDBMinRate)),
		CloudWatch: CloudWatch{
			Metrics:    []Metric{calls("ok", "ok"), calls("throttled", "throttled"), calls("system", "server_error"), calls("other", "error")},
			Expression: fmt.Sprintf("IF(ok + throttled + system + other > %s, system / (ok + throttled + system + other), 0)", num(c.DynamoDBMinRate*c.RateWindow.Seconds())),
			Period:     c.RateWindow,
		},
	}, {
		Record: DynamoDBThrottle,
		Expr:   fmt.Sprintf(`sum(rate(pacer_aws_calls_total{service_name="dynamodb", outcome="throttled"}[%s])) or vector(0)`, promDuration(throttleWindow)),
		Help:   "DynamoDB calls per second that failed throttled after the SDK's retries.",
		CloudWatch: CloudWatch{
			Metrics:    []Metric{events("reads", "ReadThrottleEvents"), events("writes", "WriteThrottleEvents")},
			Expression: "FILL(reads, 0) + FILL(writes, 0)",
			Period:     time.Minute,
		},
	}}
}

// tableAlerts fire when DynamoDB fails calls for a quarter of an hour, and
// when it throttles for minutes on end, not on a spike's first seconds,
// which on-demand tables absorb by adapting.
func tableAlerts(c Config) []Alert {
	return []Alert{{
		Name: "DynamoDBSystemErrors", Signal: DynamoDBErrors, Op: ">", Threshold: c.DynamoDBErrorRatio, For: c.DynamoDBErrorFor, Severity: Warning,
		Summary: fmt.Sprintf("{{ $value | humanizePercentage }} of DynamoDB calls fail with a system error after retries, for %s", promDuration(c.DynamoDBErrorFor)),
		Description: fmt.Sprintf("DynamoDB answers 500 (InternalServerError) or 503 to more than %s of the calls, even after the SDK's retries, for %s: "+
			"AWS's own threshold for taking it to AWS Support. Each such call is a 503 to a user or a message retried by a worker.",
			pct(c.DynamoDBErrorRatio), promDuration(c.DynamoDBErrorFor)),
	}, {
		Name: "DynamoDBThrottled", Signal: DynamoDBThrottle, Op: ">", Threshold: 0, For: c.ThrottleFor, Severity: Warning,
		Summary: fmt.Sprintf("DynamoDB has throttled requests for %s", promDuration(c.ThrottleFor)),
		Description: "DynamoDB refuses requests over a table's or a partition's throughput (a hot key, or traffic above twice the previous peak of an on-demand table): " +
			"calls retry and slow down, workers' messages go back to the queue, and the API answers 503 when retries run out.",
	}}
}
