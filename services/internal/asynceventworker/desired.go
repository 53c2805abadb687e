package asynceventworker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/autoscale"
)

// queueCounts reads the main queue's counts (sqsqueue.Queue.MainCounts).
type queueCounts interface {
	MainCounts(ctx context.Context) (sqsqueue.Counts, error)
}

// publishDesired writes, every `every` until ctx ends, how many workers the
// queue needs, as one CloudWatch Embedded Metric Format line on out: the
// metric the deployment's spike scaling reads (autoscale.DesiredMetricName
// in autoscale.DesiredMetricNamespace, dimension QueueName = queue, high
// resolution). The figure is autoscale.Controller.Hold over the queue's
// visible and in-flight counts with production's scaling configuration
// (alarm.Defaults().Scaling) at this worker's concurrency, so every worker
// publishes the same figure and the alarm's Maximum needs no coordination.
// A failed read skips that line (and is logged).
func publishDesired(ctx context.Context, out io.Writer, q queueCounts, queue string, concurrency int, every time.Duration, log *slog.Logger) error {
	cfg := alarm.Defaults().Scaling
	cfg.Concurrency = concurrency
	ctrl, err := autoscale.NewController(cfg, time.Now)
	if err != nil {
		return err
	}
	if out == nil {
		out = os.Stdout
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		c, err := q.MainCounts(ctx)
		if err == nil {
			line := desiredLine(time.Now(), queue, ctrl.Hold(autoscale.Load{Visible: c.Visible, InFlight: c.InFlight}))
			if _, err := out.Write(line); err != nil {
				log.Warn("asynceventworker: could not write the desired-workers metric", "err", err)
			}
		} else if ctx.Err() == nil {
			log.Warn("asynceventworker: could not read the queue's counts for the desired-workers metric", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// desiredLine is one EMF document of the desired-workers metric, with its
// trailing newline, written in one Write.
func desiredLine(now time.Time, queue string, desired int) []byte {
	doc := map[string]any{
		"_aws": map[string]any{
			"Timestamp": now.UnixMilli(),
			"CloudWatchMetrics": []any{map[string]any{
				"Namespace":  autoscale.DesiredMetricNamespace,
				"Dimensions": [][]string{{autoscale.DesiredMetricQueueDimension}},
				"Metrics": []any{map[string]any{"Name": autoscale.DesiredMetricName, "Unit": autoscale.DesiredMetricUnit,
					"StorageResolution": autoscale.DesiredMetricStorageResolution}},
			}},
		},
		autoscale.DesiredMetricQueueDimension: queue,
		autoscale.DesiredMetricName:           desired,
	}
	b, _ := json.Marshal(doc) // maps of strings and numbers always marshal
	return append(b, '\n')
}
