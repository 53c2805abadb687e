package asyncworker

import (
	"context"
	"log/slog"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// Handler adapts svc.Process to the consumer runtime: it returns whether
// the message may be deleted, and logs deliveries that are not done.
func Handler(svc *asyncevent.Service, log *slog.Logger) consumer.Handler {
	return func(ctx context.Context, m consumer.Message) bool {
		out := svc.Process(ctx, asyncevent.Delivery{Body: m.Body, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt})
		if out.Err != nil {
			log.Warn("asyncevent: message not done", "messageId", m.ID, "result", out.Result, "receives", m.ReceiveCount, "ack", out.Ack, "err", out.Err)
		}
		return out.Ack
	}
}
