// Package autoscale computes how many queue workers should run: AWS's
// "backlog per task" target tracking, as one pure function ([Desired]) and
// a small stateful [Controller] that damps scale-in.
//
// A worker handling Concurrency messages at once, each taking
// ProcessingTime, clears AcceptableLatency / ProcessingTime × Concurrency
// messages within AcceptableLatency: that is the target backlog per worker
// ([Config.TargetBacklogPerWorker]). The desired count is the queue's
// backlog (visible + in-flight messages) divided by that target, rounded up
// and kept within [Min, Max]:
//
//	cfg := autoscale.Config{AcceptableLatency: time.Minute, ProcessingTime: 100 * time.Millisecond,
//		Concurrency: 10, Min: 1, Max: 20, ScaleInWindow: 5 * time.Minute}
//	ctl, err := autoscale.NewController(cfg, time.Now)
//	...
//	d := ctl.Next(autoscale.Load{Visible: 9000, InFlight: 100, Running: 1})
//	// d.Desired == 2 (9100 / 6000, rounded up): start one more worker
//
// The controller scales out at once and scales in only to the highest
// recommendation of the last ScaleInWindow (Kubernetes' stabilization
// window, ECS's scale-in cooldown), so a load oscillating around a
// threshold does not flap. docs/autoscaling.md has the formula and a worked
// example; the same Config drives the local controller of `make run` and
// the deployment's ECS and KEDA scaling policies.
package autoscale
