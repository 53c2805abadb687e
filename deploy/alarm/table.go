package alarm

import (
	"fmt"
	"time"
)

// throttleWindow is the rate window of throttled calls: short, so that a
// blip is over before ThrottleFor, and two scrapes long at Prometheus's
// default interval (1m).
const throttleWindow = 2 * time.Minute

// tableSignals are DynamoDB's throttling: per table in CloudWatch (its read
// and write throttle events), and in Prometheus the calls that still
// failed throttled after the SDK's retries (the processes do not label
// their calls by table).
func tableSignals(c Config) []Signal {
	events := func(id, name string) Metric {
		return Metric{ID: id, Namespace: "AWS/DynamoDB", Name: name, Stat: "Sum", Dimensions: map[string]string{"TableName": "{table}"}}
	}
	return []Signal{{
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

// tableAlerts fire when DynamoDB throttles for minutes on end, not on a
// spike's first seconds, which on-demand tables absorb by adapting.
func tableAlerts(c Config) []Alert {
	return []Alert{{
		Name: "DynamoDBThrottled", Signal: DynamoDBThrottle, Op: ">", Threshold: 0, For: c.ThrottleFor, Severity: Warning,
		Summary: fmt.Sprintf("DynamoDB has throttled requests for %s", promDuration(c.ThrottleFor)),
		Description: "DynamoDB refuses requests over a table's or a partition's throughput (a hot key, or traffic above twice the previous peak of an on-demand table): " +
			"calls retry and slow down, workers' messages go back to the queue, and the API answers 503 when retries run out.",
	}}
}
