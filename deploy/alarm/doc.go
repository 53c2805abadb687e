// Package alarm is Pacer's alarms as data, the one place they are defined:
// the signals they watch (recorded from the metrics of docs/metrics.md) and
// the alerts on those signals, each with a severity, a summary, a
// description and a runbook in docs/runbooks/<alert>.md that works with
// CloudWatch alone (docs/operations.md).
//
// [WritePrometheus] renders them as a Prometheus rule file
// (`make rules` writes deploy/prometheus/rules.yml, `make verify` checks it
// is current and runs its promtool unit tests). Each [Signal] also carries
// its CloudWatch equivalent ([CloudWatch]: AWS metrics and metric math) for
// the deployment generator to turn the same alerts into CloudWatch alarms;
// a few signals exist in CloudWatch only (what only AWS measures: the load
// balancer's own errors, message ages, Firehose). The custom metrics the
// CloudWatch signals read ([Shipped]: name, unit, dimensions) are what the
// binaries write in the Embedded Metric Format
// (services/internal/metrics.EMF, with metrics.EMFWriter). Thresholds come from a [Config];
// [Defaults] is production's, whose backlog threshold is the worker pool's
// autoscaling target ([autoscale.Config.TargetBacklogPerWorker]).
package alarm
