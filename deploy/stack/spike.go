package stack

import (
	"fmt"
	"strings"
	"time"

	"github.com/pacerhq/pacer/sdk/autoscale"
)

// The spike model: how long each way of growing a pool takes from the
// first message (or request) of a spike to the first new task taking
// messages (or requests), stage by stage, from AWS's documented periods
// and this template's own settings (docs/autoscaling.md, "Reaching a
// spike"). AWS cannot be reached from here, so these are models, not
// measurements; the stages AWS does not document are marked estimates.
//
// A stage is a fixed delay plus, for a periodic process (a metric
// period, an alarm's evaluation, a log flush), a wait for its next tick:
// up to its whole period, (period+1)/2 s on average over where the spike
// falls between ticks. A test simulates the same stages second by second,
// with sdk/autoscale's controller computing the workers' metric, and
// checks both figures; another checks that docs/autoscaling.md carries
// SpikeTable.

// Stage is one step of a path.
type Stage struct {
	What string
	// Fixed is the delay every spike sees; Period, if set, is a periodic
	// process's: a spike waits 1 s to Period for its next tick.
	Fixed, Period time.Duration
	Source        Source
	// Estimate marks a figure AWS does not document.
	Estimate bool
}

// Worst is the stage's longest delay: Fixed + Period.
func (s Stage) Worst() time.Duration { return s.Fixed + s.Period }

// Mean is the stage's average delay over where the spike falls between
// ticks: Fixed + (Period + 1 s) / 2 (a tick at the spike's own second does
// not see it).
func (s Stage) Mean() time.Duration {
	if s.Period == 0 {
		return s.Fixed
	}
	return s.Fixed + (s.Period+time.Second)/2
}

// Source is where a stage's figure comes from.
type Source struct{ Title, URL string }

// Path is one way new tasks reach a spike.
type Path struct {
	Name   string
	Stages []Stage
}

// Worst and Mean are the path's total delays.
func (p Path) Worst() time.Duration { return p.sum(Stage.Worst) }

// Mean is the path's average total delay.
func (p Path) Mean() time.Duration { return p.sum(Stage.Mean) }

func (p Path) sum(f func(Stage) time.Duration) time.Duration {
	var d time.Duration
	for _, s := range p.Stages {
		d += f(s)
	}
	return d
}

// AWS's behaviour the model reads, besides the template's settings.
const (
	// trackingDatapoints is how many breaching datapoints in a row the
	// scale-out alarm Application Auto Scaling creates for a target
	// tracking policy waits for (its AlarmHigh: 3 of 3).
	trackingDatapoints = 3
	// minutePeriod is SQS's, the ALB's and ECS's standard metric period;
	// CloudWatch evaluates alarms on it once a minute.
	minutePeriod = time.Minute
	// metricDelay is how long a one-minute AWS metric takes to appear
	// after its minute ends; highResDelay a 20-second one's.
	metricDelay  = time.Minute
	highResDelay = 20 * time.Second
	// highResEvaluation is how often CloudWatch evaluates a
	// high-resolution alarm.
	highResEvaluation = 10 * time.Second
	// awslogsFlush is how often the awslogs driver ships a container's
	// lines to CloudWatch Logs; emfExtraction how long CloudWatch Logs
	// then takes to make an EMF document's metric available.
	awslogsFlush  = 5 * time.Second
	emfExtraction = 10 * time.Second
	// handoff is from an alarm's action to ECS's new desired count.
	handoff = 5 * time.Second
	// fargateStart is from a new desired count to the task's container
	// running: capacity, network interface, the whole image pulled, start.
	fargateStart = time.Minute
)

// Sources of the figures.
var (
	srcTargetTracking = Source{"Application Auto Scaling: how target tracking works (it creates the alarms)", "https://docs.aws.amazon.com/autoscaling/application/userguide/target-tracking-scaling-policy-overview.html"}
	srcECSFaster      = Source{"Amazon ECS: faster auto scaling with high-resolution metrics (20 s)", "https://docs.aws.amazon.com/AmazonECS/latest/developerguide/target-tracking-faster-auto-scaling.html"}
	srcSQSMetrics     = Source{"Amazon SQS: available CloudWatch metrics", "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html"}
	srcALBMetrics     = Source{"ALB CloudWatch metrics (reported every 60 s)", "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-cloudwatch-metrics.html"}
	srcAlarmEval      = Source{"CloudWatch: alarm periods and evaluation (10-s and 30-s alarms every 10 s)", "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html"}
	srcEMFAlarms      = Source{"CloudWatch: alarms on embedded metric format metrics", "https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Alarms.html"}
	srcAwslogs        = Source{"awslogs driver: batchPublishFrequency = 5 s", "https://github.com/moby/moby/blob/master/daemon/logger/awslogs/cloudwatchlogs.go"}
	srcStepScaling    = Source{"Application Auto Scaling: how step scaling works", "https://docs.aws.amazon.com/autoscaling/application/userguide/step-scaling-policy-overview.html"}
	srcFargateStart   = Source{"AWS re:Post: Fargate tasks take 30–45 s or longer to start", "https://repost.aws/questions/QUjZAzJd27SZWxXM7MgyxOZw/how-to-speed-up-provisioning-of-ecs-fargate-task"}
	srcScheduled      = Source{"Application Auto Scaling: ScalableTargetAction (at the scheduled time, out to the minimum)", "https://docs.aws.amazon.com/autoscaling/application/APIReference/API_ScalableTargetAction.html"}
	srcHealthChecks   = Source{"ALB target group health checks", "https://docs.aws.amazon.com/elasticloadbalancing/latest/application/target-group-health-checks.html"}
	srcTemplate       = Source{"this template (deploy/stack)", ""}
)

// Path names, as the docs and the simulation name them.
const (
	PathWorkerTracking = "Worker: target tracking alone (SQS 1-minute metrics)"
	PathWorkerSQSStep  = "Worker: step scaling on SQS's 1-minute metric (not chosen)"
	PathWorkerSpike    = "Worker: spike policy (workers' EMF metric, 10-s alarm)"
	PathWorkerPrescale = "Worker: pre-scale (PrescaleAt 5 min before opening)"
	PathAPICPU         = "API: CPU target tracking (ECS 20-s metric)"
	PathAPIRequests    = "API: ALB requests per task (1-minute metric)"
	PathAPIPrescale    = "API: pre-scale (PrescaleAt 5 min before opening)"
)

// SpikePaths returns the modelled paths, worker's first.
func SpikePaths() []Path {
	start := Stage{What: "Fargate starts the task: capacity, network interface, the whole image pulled, the container started",
		Fixed: fargateStart, Source: srcFargateStart}
	act := Stage{What: "Application Auto Scaling sets ECS's desired count", Fixed: handoff, Source: srcStepScaling, Estimate: true}
	healthy := Stage{What: fmt.Sprintf("the load balancer's %d health checks, %s apart, pass", healthyThreshold, seconds(healthCheckInterval)),
		Fixed: healthyThreshold * healthCheckInterval, Source: srcHealthChecks}
	ready := Stage{What: "tasks started at PrescaleAt already run when the sale opens", Source: srcScheduled}
	return []Path{
		{PathWorkerTracking, append(tracking(minutePeriod, metricDelay, minutePeriod, srcSQSMetrics), act, start)},
		{PathWorkerSQSStep, append(sqsStep(), act, start)},
		{PathWorkerSpike, append(spikeStages(), act, start)},
		{PathWorkerPrescale, []Stage{ready}},
		{PathAPICPU, append(tracking(apiCPUPeriod, highResDelay, highResEvaluation, srcECSFaster), act, start, healthy)},
		{PathAPIRequests, append(tracking(minutePeriod, metricDelay, minutePeriod, srcALBMetrics), act, start, healthy)},
		{PathAPIPrescale, []Stage{ready}},
	}
}

// tracking is a target tracking policy's stages on a metric of the given
// period, published delay after its period ends, on an alarm evaluated
// every eval: the spike's period and the next ones must all breach.
func tracking(period, delay, eval time.Duration, metric Source) []Stage {
	return []Stage{
		{What: fmt.Sprintf("%d breaching %s datapoints in a row: the spike's period ends, then %d more", trackingDatapoints, span(period), trackingDatapoints-1),
			Fixed: (trackingDatapoints - 1) * period, Period: period, Source: srcTargetTracking, Estimate: true},
		{What: "the last datapoint is published", Fixed: delay, Source: metric, Estimate: true},
		{What: fmt.Sprintf("the alarm's next evaluation (%s)", every(eval)), Period: eval, Source: srcAlarmEval},
	}
}

// sqsStep is a step scaling policy's stages on an alarm on SQS's visible
// messages: one breaching one-minute datapoint is enough.
func sqsStep() []Stage {
	return []Stage{
		{What: "the spike's 1-minute datapoint ends", Period: minutePeriod, Source: srcSQSMetrics},
		{What: "the datapoint is published", Fixed: metricDelay, Source: srcSQSMetrics, Estimate: true},
		{What: "the alarm's next evaluation (" + every(minutePeriod) + ")", Period: minutePeriod, Source: srcAlarmEval},
	}
}

// spikeStages are the worker spike policy's stages before its action: a
// worker publishes the held recommendation, the awslogs driver ships the
// line, CloudWatch Logs extracts the metric, the 10-second alarm fires on
// one datapoint.
func spikeStages() []Stage {
	return []Stage{
		{What: fmt.Sprintf("a worker's next %s (%s)", autoscale.DesiredMetricName, every(autoscale.PublishEvery)),
			Period: autoscale.PublishEvery, Source: srcTemplate},
		{What: fmt.Sprintf("the awslogs driver ships the line (%s)", every(awslogsFlush)), Period: awslogsFlush, Source: srcAwslogs},
		{What: "CloudWatch Logs extracts the metric", Fixed: emfExtraction, Source: srcEMFAlarms, Estimate: true},
		{What: fmt.Sprintf("the %s alarm's next evaluation, %d of %d datapoints", span(spikeAlarmPeriod), spikeAlarmDatapoints, spikeAlarmPeriods),
			Period: highResEvaluation, Source: srcAlarmEval},
	}
}

// SpikeTable is docs/autoscaling.md's table of paths: a summary, then
// each path's stages with their sources.
func SpikeTable(paths []Path) string {
	var b strings.Builder
	b.WriteString("| Path | First new task, worst case | Average |\n|---|---|---|\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", p.Name, seconds(p.Worst()), seconds(p.Mean()))
	}
	for _, p := range paths {
		fmt.Fprintf(&b, "\n%s:\n\n| Stage | Worst | Average | Source |\n|---|---|---|---|\n", p.Name)
		for _, s := range p.Stages {
			src := s.Source.Title
			if s.Source.URL != "" {
				src = "[" + src + "](" + s.Source.URL + ")"
			}
			if s.Estimate {
				src = "estimate; " + src
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.What, seconds(s.Worst()), seconds(s.Mean()), src)
		}
		fmt.Fprintf(&b, "| **total** | **%s** | **%s** | |\n", seconds(p.Worst()), seconds(p.Mean()))
	}
	return b.String()
}

// span writes a period for prose: "10-s", "1-minute".
func span(d time.Duration) string {
	if d == time.Minute {
		return "1-minute"
	}
	return fmt.Sprintf("%d-s", int(d/time.Second))
}

// every writes a period for "how often": "every 10 s", "every minute".
func every(d time.Duration) string {
	if d == time.Minute {
		return "every minute"
	}
	return "every " + seconds(d)
}

// seconds writes d in seconds, with a decimal only when it has one.
func seconds(d time.Duration) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0") + " s"
}
