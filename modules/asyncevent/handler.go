package asyncevent

import (
	"context"

	"github.com/pacerhq/pacer/modules/asyncevent/consumer"
)

// Handler adapts Process to the consumer runtime: it returns whether the
// message may be deleted, and logs deliveries that failed.
func (s *Service) Handler() consumer.Handler {
	return func(ctx context.Context, m consumer.Message) bool {
		out := s.Process(ctx, Delivery{Body: m.Body, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt})
		if out.Err != nil {
			s.cfg.Log.Warn("asyncevent: message not done", "messageId", m.ID, "result", out.Result, "receives", m.ReceiveCount, "ack", out.Ack, "err", out.Err)
		}
		return out.Ack
	}
}
