package alarm

import (
	"fmt"
	"time"
)

// analyticsSignals follow the analytics events from the table's stream to
// S3: how far behind the publisher is (its own metric, shipped; DynamoDB
// Streams has no iterator-age metric for a consumer that is not a Lambda
// trigger), whether Firehose delivers to S3, and what EventBridge could
// not hand to Firehose (the rule's DLQ).
func analyticsSignals(c Config) []Signal {
	freshness := num(c.DeliveryFreshnessMax.Seconds())
	firehose := func(id, name, stat string) Metric {
		return Metric{ID: id, Namespace: "AWS/Firehose", Name: name, Stat: stat, Dimensions: map[string]string{"DeliveryStreamName": "{deliveryStream}"}}
	}
	return []Signal{
		{
			Record: PublisherLag,
			Expr:   "max(pacer_events_publisher_lag_seconds) or vector(+Inf)",
			Help:   "How far behind the table's changes the analytics publisher is, in seconds; +Inf when no publisher reports.",
			CloudWatch: CloudWatch{
				Metrics:    []Metric{customMetric("lag", "pacer_events_publisher_lag_seconds", "Maximum", "Seconds", nil)},
				Expression: "lag",
				Period:     time.Minute,
				// The publisher writes its lag every 30 s; without it, it
				// is stopped or hung, and the stream's changes age.
				MissingIsBreaching: true,
			},
		},
		{
			Record: DeliveryFailing,
			Help: fmt.Sprintf("1 while Firehose fails some deliveries to S3 (DeliveryToS3.Success below 1) or holds an event older than %s, else 0.",
				promDuration(c.DeliveryFreshnessMax)),
			CloudWatch: CloudWatch{
				Metrics: []Metric{
					firehose("success", "DeliveryToS3.Success", "Average"),
					firehose("freshness", "DeliveryToS3.DataFreshness", "Maximum"),
				},
				Expression: fmt.Sprintf("IF(FILL(success, 1) < 1 OR FILL(freshness, 0) > %s, 1, 0)", freshness),
				Period:     c.RateWindow,
			},
		},
		{
			Record: RuleDLQDepth,
			Help:   "Events the EventBridge rule could not deliver to Firehose after its retries, waiting in the rule's DLQ.",
			CloudWatch: CloudWatch{
				Metrics:    []Metric{sqsMetric("dlq", "ApproximateNumberOfMessagesVisible", "{eventsRuleDLQ}")},
				Expression: "dlq",
				Period:     c.RateWindow,
			},
		},
	}
}

// analyticsAlerts fire before analytics events are lost: the stream and
// Firehose keep them 24 hours, the rule's DLQ 14 days.
func analyticsAlerts(c Config) []Alert {
	return []Alert{
		{
			Name: "EventsPublisherLagHigh", Signal: PublisherLag, Op: ">", Threshold: c.PublisherLagMax.Seconds(), For: c.PublisherLagFor, Severity: Critical,
			Summary: fmt.Sprintf("The analytics publisher is {{ $value | humanizeDuration }} behind the table's changes, above %s", promDuration(c.PublisherLagMax)),
			Description: "The publisher is stopped, hung, or cannot hand events to EventBridge: DynamoDB Streams keeps the table's changes 24 hours, " +
				"and the analytics events of changes it has not read by then are lost for good.",
		},
		{
			Name: "EventsDeliveryFailing", Signal: DeliveryFailing, Op: ">", Threshold: 0, For: c.DeliveryFor, Severity: Critical,
			Summary: "Firehose fails to deliver analytics events to S3",
			Description: "Firehose's deliveries to the events bucket fail or lag: it retries for 24 hours and then drops the events (the bucket's policy, " +
				"the role, a deleted bucket or KMS key). The analytics queries miss them meanwhile.",
		},
		{
			Name: "EventsRuleDLQNotEmpty", Signal: RuleDLQDepth, Op: ">", Threshold: 0, Severity: Warning,
			Summary: "{{ $value }} analytics events wait in the EventBridge rule's DLQ",
			Description: "EventBridge could not put these events into Firehose after its retries (throttling, a deleted stream, the rule's role): " +
				"they are missing from S3 until replayed, and the DLQ keeps them 14 days.",
		},
	}
}
