package autoscale

import "time"

// The desired-workers metric: what each worker publishes so that the
// deployment's spike scaling (deploy/stack: a 10-second CloudWatch alarm
// and an ECS step scaling policy) sets the pool to the count this package
// computes, without waiting for SQS's one-minute metrics. Each worker,
// every PublishEvery, reads its queue's counts, calls [Controller.Hold]
// and writes the result as one Embedded Metric Format document on its
// standard output (the awslogs driver ships it; CloudWatch Logs extracts
// the metric):
//
//	{"_aws": {"Timestamp": <ms>, "CloudWatchMetrics": [{"Namespace": "Pacer",
//	  "Dimensions": [["QueueName"]],
//	  "Metrics": [{"Name": "pacer_workers_desired", "Unit": "None", "StorageResolution": 1}]}]},
//	 "QueueName": "<the queue's name, stage suffix included>", "pacer_workers_desired": 9}
//
// Every worker publishes the same figure for the same queue (they read the
// same counts); the alarm takes the Maximum, so the workers' documents
// need no coordination, and a pool of one still publishes. docs/autoscaling.md
// ("Reaching a spike") has the timing.
const (
	// DesiredMetricNamespace and DesiredMetricName name the metric.
	DesiredMetricNamespace = "Pacer"
	DesiredMetricName      = "pacer_workers_desired"
	// DesiredMetricQueueDimension is its one dimension, the queue's name
	// (with its stage suffix): stages sharing an account do not scale each
	// other.
	DesiredMetricQueueDimension = "QueueName"
	// DesiredMetricUnit is its CloudWatch unit: None, as for every level
	// Pacer ships (a gauge: its Maximum is what the alarms read), where
	// Count is kept for counters' increases, which only a Sum reads.
	DesiredMetricUnit = "None"
	// DesiredMetricStorageResolution is its EMF StorageResolution: 1 is
	// high resolution, which an alarm with a 10-second period needs.
	DesiredMetricStorageResolution = 1
	// PublishEvery is how often each worker publishes it: at least once
	// per 10-second alarm period, and no faster than the awslogs driver
	// ships its lines (every 5 s).
	PublishEvery = 5 * time.Second
)

// Hold evaluates l like Next, for a scaler that owns the running count,
// and returns what to publish as DesiredMetricName: the recommendation
// when it is at least the highest of the last ScaleInWindow, that highest
// recommendation otherwise (l.Running is ignored). A scaler that sets the
// pool to it exactly (ECS step scaling with ExactCapacity) scales out at
// once and in only after the window, as Next does. It records l's
// recommendation, as Next does.
func (c *Controller) Hold(l Load) int {
	l.Running = c.cfg.Max // never above what runs: nothing to cap
	return c.Next(l).Desired
}
