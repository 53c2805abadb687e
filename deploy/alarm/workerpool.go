package alarm

import (
	"fmt"
	"time"
)

// workerPoolSignals say whether the worker pool runs at its maximum: in
// Prometheus Scaling.Max (KEDA's maxReplicaCount), on AWS the template's
// WorkerMaxTasks parameter ({workerMaxTasks}, which the generator fills
// in), which may differ from the default.
func workerPoolSignals(c Config) []Signal {
	return []Signal{{
		Record: WorkersAtMax,
		Expr:   fmt.Sprintf("pacer:workers_running >= bool %d", c.Scaling.Max),
		Help:   fmt.Sprintf("1 while as many workers run as the pool may have (%d), else 0.", c.Scaling.Max),
		CloudWatch: CloudWatch{
			Metrics: []Metric{{ID: "tasks", Namespace: "ECS/ContainerInsights", Name: "RunningTaskCount", Stat: "Minimum",
				Dimensions: map[string]string{"ClusterName": "{cluster}", "ServiceName": "{service}"}}},
			Expression: "IF(tasks >= {workerMaxTasks}, 1, 0)",
			Period:     time.Minute,
		},
	}}
}

// workerPoolAlerts fire when the workers have run at their maximum long
// after a spike's scale-out.
func workerPoolAlerts(c Config) []Alert {
	return []Alert{{
		Name: "WorkersAtMaximum", Signal: WorkersAtMax, Op: ">", Threshold: 0, For: c.WorkersAtMaxFor, Severity: Warning,
		Summary: fmt.Sprintf("The workers have run at their maximum for %s", promDuration(c.WorkersAtMaxFor)),
		Description: fmt.Sprintf("The worker pool has run at its maximum task count for %s (the spike policies reach it within a minute and scale in "+
			"after %s): the queue needs more workers than the pool may have, so it drains no faster however much more arrives, the "+
			"backlog and the queue delay grow, and nothing is left for the next rise. Raise the maximum, or find why the workers are slow.",
			promDuration(c.WorkersAtMaxFor), promDuration(c.Scaling.ScaleInWindow)),
	}}
}
