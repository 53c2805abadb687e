package asyncworker

import (
	"context"
	"log/slog"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// Handler adapts svc.Process to the consumer runtime: it returns whether
// the message may be deleted, logs deliveries that are not done, and, when
// m is not nil, observes each delivery (outcome, time in the handler, in
// flight) and the request's QueueDelay and E2EDelay.
func Handler(svc *asyncevent.Service, log *slog.Logger, m *metrics.Worker) consumer.Handler {
	return func(ctx context.Context, msg consumer.Message) bool {
		var done func(string)
		if m != nil {
			done = m.Start()
		}
		out := svc.Process(ctx, asyncevent.Delivery{Body: msg.Body, ReceiveCount: msg.ReceiveCount, SentAt: msg.SentAt})
		if out.Err != nil {
			log.Warn("asyncevent: message not done", "messageId", msg.ID, "result", out.Result, "receives", msg.ReceiveCount, "ack", out.Ack, "err", out.Err)
		}
		if m != nil {
			done(outcome(out))
			if out.StartedAt != 0 {
				m.QueueDelay(string(out.EventType), out.QueuedAt, out.StartedAt)
			}
			if out.FinishedAt != 0 {
				m.E2EDelay(string(out.EventType), out.QueuedAt, out.FinishedAt)
			}
		}
		return out.Ack
	}
}

// outcome is the metrics outcome of a delivery: retryable when it is not
// acked; else by the request's status (a lottery entry collected for the
// draw is a success of its delivery); final for FAILED_FINAL, a malformed
// message or an unknown request.
func outcome(out asyncevent.Outcome) string {
	switch {
	case !out.Ack:
		return metrics.Retryable
	case out.Status == asyncevent.StatusSucceeded, out.Status == asyncevent.StatusProcessing:
		return metrics.Succeeded
	case out.Status == asyncevent.StatusRejected:
		return metrics.Rejected
	}
	return metrics.Final
}
