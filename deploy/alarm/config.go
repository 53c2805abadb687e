package alarm

import (
	"time"

	"github.com/pacerhq/pacer/sdk/autoscale"
)

// Config holds the alarms' thresholds.
type Config struct {
	// Scaling is the worker pool's autoscaling; QueueBacklogPerWorkerHigh
	// fires when the backlog per worker stays above its target.
	Scaling autoscale.Config
	// WorkerJob is the workers' Prometheus job: with no
	// pacer_workers_running series, the running workers are its up targets.
	WorkerJob string
	// RateWindow is the window of rate() and of the DLQ inflow delta.
	RateWindow time.Duration
	// BacklogFor is how long the backlog may stay above target (longer
	// than a scale-out takes).
	BacklogFor time.Duration
	// StalledFor is how long messages may wait with nothing consumed.
	StalledFor time.Duration
	// HTTP5xxRatio and HTTPMinRate: the 5xx share of a service's answers
	// that alerts, counted only above HTTPMinRate requests per second.
	HTTP5xxRatio, HTTPMinRate float64
	HTTP5xxFor                time.Duration
	// FinalRatio and WorkerMinRate: the FAILED_FINAL share of finished
	// messages that alerts, counted only above WorkerMinRate per second.
	FinalRatio, WorkerMinRate float64
	FinalFor                  time.Duration
	// InvariantFor is how long the capacity invariant may read broken (the
	// stats read a GSI, which lags the table by up to a second or so).
	InvariantFor time.Duration
	// APIJobs are the APIs' Prometheus jobs, the service label of their
	// HTTP metrics; NoTargetFor is how long one may have no healthy
	// target (no instance up) before APINoHealthyTarget fires.
	APIJobs     []string
	NoTargetFor time.Duration
	// QueueAgeMax is the age of the main queue's oldest message that
	// alerts; DLQAgeMax the DLQ's, well before its retention ends.
	QueueAgeMax, DLQAgeMax time.Duration
	// ThrottleFor is how long DynamoDB may throttle before it alerts.
	ThrottleFor time.Duration
	// PublisherLagMax is how far behind the table's changes the analytics
	// publisher may be (the stream keeps them 24 hours), held
	// PublisherLagFor.
	PublisherLagMax, PublisherLagFor time.Duration
	// DeliveryFreshnessMax is the age of the oldest analytics event
	// Firehose has not yet delivered to S3 that alerts (above Firehose's
	// buffer interval), held DeliveryFor, like a failed delivery.
	DeliveryFreshnessMax, DeliveryFor time.Duration
	// LatencyP99Max is the 99th percentile of an API's answer times that
	// alerts, held LatencyFor (with at least HTTPMinRate requests/s).
	LatencyP99Max, LatencyFor time.Duration
	// UnauthenticatedRatio is the share of an API's answers that are 401
	// that alerts, ClientErrorRatio the share of its other 4xx (the
	// problems metric's class client: not 401, nor 429 rate limits, nor
	// 499 cancellations); each held ProblemRatioFor, with at least
	// HTTPMinRate requests/s.
	UnauthenticatedRatio, ClientErrorRatio float64
	ProblemRatioFor                        time.Duration
	// DynamoDBErrorRatio is the share of DynamoDB calls failing with a
	// 5xx after the SDK's retries that alerts, held DynamoDBErrorFor, with
	// at least DynamoDBMinRate calls/s.
	DynamoDBErrorRatio, DynamoDBMinRate float64
	DynamoDBErrorFor                    time.Duration
	// WorkersAtMaxFor is how long the worker pool may run at its maximum
	// (Scaling.Max; on AWS the WorkerMaxTasks parameter).
	WorkersAtMaxFor time.Duration
	// UnhealthyTargetFor is how long an API may have unhealthy instances
	// beside healthy ones.
	UnhealthyTargetFor time.Duration
	// KeySetMissingFor is how long an API instance may hold no key of the
	// identity provider's key set; KeySetFailingFor how long its fetches
	// of the key set may fail.
	KeySetMissingFor, KeySetFailingFor time.Duration
	// RunbookBase is prefixed to docs/runbooks/<alert>.md in runbook_url.
	RunbookBase string
}

// Defaults is production's configuration: the worker defaults
// (concurrency 10) with a minute of acceptable latency at 100 ms a message,
// so 6000 messages per worker, 1 to 20 workers, 5 minutes of scale-in
// stabilization. ProcessingTime is a planning figure until the drain rate is
// measured (docs/autoscaling.md).
func Defaults() Config {
	return Config{
		Scaling: autoscale.Config{
			AcceptableLatency: time.Minute,
			ProcessingTime:    100 * time.Millisecond,
			Concurrency:       10,
			Min:               1,
			Max:               20,
			ScaleInWindow:     5 * time.Minute,
		},
		WorkerJob:     "asyncevent-worker",
		RateWindow:    5 * time.Minute,
		BacklogFor:    10 * time.Minute,
		StalledFor:    5 * time.Minute,
		HTTP5xxRatio:  0.05,
		HTTPMinRate:   0.1,
		HTTP5xxFor:    2 * time.Minute,
		FinalRatio:    0.05,
		WorkerMinRate: 0.05,
		FinalFor:      5 * time.Minute,
		InvariantFor:  2 * time.Minute,
		APIJobs:       []string{"asyncevent-api", "photo-api"},
		NoTargetFor:   2 * time.Minute,
		QueueAgeMax:   10 * time.Minute,
		DLQAgeMax:     3 * 24 * time.Hour,
		ThrottleFor:   5 * time.Minute,
		// The publisher polls every second; half an hour behind leaves
		// 23 hours before the stream trims what it has not read.
		PublisherLagMax:      30 * time.Minute,
		PublisherLagFor:      5 * time.Minute,
		DeliveryFreshnessMax: 15 * time.Minute,
		DeliveryFor:          10 * time.Minute,
		// An answer takes a few AWS calls of milliseconds each: a p99
		// of a second is requests waiting (CPU, a slow dependency, the
		// SDK's backoff), 10 minutes is no blip.
		LatencyP99Max: time.Second,
		LatencyFor:    10 * time.Minute,
		// Clients renew tokens before they expire and send valid
		// requests: a quarter of all answers refused is a client, an
		// identity provider or a deploy gone wrong, or a flood.
		UnauthenticatedRatio: 0.25,
		ClientErrorRatio:     0.25,
		ProblemRatioFor:      10 * time.Minute,
		// AWS's advice: a DynamoDB error rate of 1 % or more over 15
		// minutes is one to take to AWS Support (these are the errors
		// its retries did not absorb, a stricter test of the same).
		DynamoDBErrorRatio: 0.01,
		DynamoDBMinRate:    0.1,
		DynamoDBErrorFor:   15 * time.Minute,
		// The spike policies reach the maximum within a minute and scale
		// in after the 5-minute window: 15 minutes at it is load above
		// the pool's ceiling, not a spike's first minutes.
		WorkersAtMaxFor: 15 * time.Minute,
		// A target fails its checks after 30 s (3 × 10 s) and ECS
		// replaces it within a few minutes: 5 minutes is a replacement
		// that does not help.
		UnhealthyTargetFor: 5 * time.Minute,
		// An instance fetches the key set every 5 minutes (sdk/auth): one
		// that met a blip at start-up loads it at its next fetch; one
		// still without a key after that refuses every token. Three
		// failed fetches in a row (15 minutes) are no blip.
		KeySetMissingFor: 6 * time.Minute,
		KeySetFailingFor: 15 * time.Minute,
		RunbookBase:      "https://github.com/pacerhq/pacer/blob/main/",
	}
}
