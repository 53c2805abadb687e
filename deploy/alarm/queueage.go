package alarm

import (
	"fmt"
	"time"
)

// queueAgeSignals are the ages of the oldest message in the main queue and
// in the DLQ, which only SQS's CloudWatch metrics give (GetQueueAttributes
// has no age).
func queueAgeSignals(Config) []Signal {
	age := func(queue string) CloudWatch {
		return CloudWatch{
			Metrics:    []Metric{sqsMetric("age", "ApproximateAgeOfOldestMessage", queue)},
			Expression: "age",
			Period:     time.Minute,
		}
	}
	return []Signal{
		{Record: QueueAge, Help: "Age in seconds of the main queue's oldest message.", CloudWatch: age("{queue}")},
		{Record: DLQAge, Help: "Age in seconds of the DLQ's oldest message.", CloudWatch: age("{dlq}")},
	}
}

// queueAgeAlerts fire when a participation waits far longer than promised,
// and when dead letters wait for a redrive long enough to near the DLQ's
// retention.
func queueAgeAlerts(c Config) []Alert {
	return []Alert{
		{
			Name: "QueueMessageAgeHigh", Signal: QueueAge, Op: ">", Threshold: c.QueueAgeMax.Seconds(), Severity: Critical,
			Summary: fmt.Sprintf("The main queue's oldest message is {{ $value | humanizeDuration }} old, above %s", promDuration(c.QueueAgeMax)),
			Description: fmt.Sprintf("A participation has waited more than %s to be decided (the promise is %s): workers are missing, stalled, or retry it again and again.",
				promDuration(c.QueueAgeMax), promDuration(c.Scaling.AcceptableLatency)),
		},
		{
			Name: "DLQMessageAgeHigh", Signal: DLQAge, Op: ">", Threshold: c.DLQAgeMax.Seconds(), Severity: Warning,
			Summary: fmt.Sprintf("The DLQ's oldest message is {{ $value | humanizeDuration }} old, above %s", promDuration(c.DLQAgeMax)),
			Description: "Dead letters wait for a redrive: each is a participation still undecided, and SQS deletes it 14 days after it was first sent. " +
				"Find their cause and redrive them before then.",
		},
	}
}
