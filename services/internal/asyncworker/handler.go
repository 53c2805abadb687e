package asyncworker

import (
	"context"
	"log/slog"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// Queue is what the handler asks of the queue besides the consumer's
// Source (sqsqueue.Queue is one).
type Queue interface {
	// SendDead sends m to the DLQ tagged with class and code.
	SendDead(ctx context.Context, m consumer.Message, class asyncevent.DeadClass, code string) error
	// MaxReceives is the main queue's maxReceiveCount (0: no DLQ).
	MaxReceives() int
	// Delay makes a received message visible again after d.
	Delay(ctx context.Context, handle string, d time.Duration) error
}

// Handler adapts svc.Process to the consumer runtime: it returns whether
// the message may be deleted, logs deliveries that are not done, and, when
// m is not nil, observes each delivery (outcome, time in the handler, in
// flight) and the request's QueueDelay and E2EDelay.
//
// With q set, a delivery that is not done on the last receive SQS allows
// (ReceiveCount ≥ MaxReceives) is sent to the DLQ tagged with its class
// (asyncevent.DeadClassOf) and then acked, so the consumer deletes it from
// the main queue. If the send fails the message is left, and SQS moves it
// untagged on its next receive (class UNKNOWN); if the delete fails, SQS
// moves a second, untagged copy, which the DLQ view and the class redrive
// collapse (see sqsqueue.Queue.SendDead). A message left on the queue with
// an Outcome.RetryAfter (an arrival candidate) comes back after that
// instead of after the visibility timeout.
func Handler(svc *asyncevent.Service, log *slog.Logger, m *metrics.Worker, q Queue) consumer.Handler {
	return func(ctx context.Context, msg consumer.Message) bool {
		var done func(string)
		if m != nil {
			done = m.Start()
		}
		out := svc.Process(ctx, asyncevent.Delivery{Body: msg.Body, ReceiveCount: msg.ReceiveCount, SentAt: msg.SentAt})
		if out.Err != nil {
			log.Warn("asyncevent: message not done", "messageId", msg.ID, "result", out.Result, "receives", msg.ReceiveCount, "ack", out.Ack, "err", out.Err)
		}
		ack := out.Ack
		if !ack && q != nil && q.MaxReceives() > 0 && msg.ReceiveCount >= q.MaxReceives() {
			class, code := asyncevent.DeadClassOf(out)
			if err := q.SendDead(context.WithoutCancel(ctx), msg, class, code); err != nil {
				log.Error("asyncevent: could not dead-letter; SQS will move it untagged", "messageId", msg.ID, "class", class, "err", err)
			} else {
				log.Warn("asyncevent: dead-lettered", "messageId", msg.ID, "class", class, "errorCode", code, "receives", msg.ReceiveCount)
				ack = true
				if m != nil {
					m.DeadLettered(string(class))
				}
			}
		}
		if !ack && out.RetryAfter > 0 && q != nil {
			if err := q.Delay(ctx, msg.ReceiptHandle, out.RetryAfter); err != nil {
				// The message comes back after the visibility timeout.
				log.Warn("asyncevent: could not shorten the message's visibility", "messageId", msg.ID, "err", err)
			}
		}
		if m != nil {
			done(metrics.Outcome(out))
			if out.StartedAt != 0 && out.QueuedAt != 0 {
				m.QueueDelay(string(out.EventType), out.QueuedAt, out.StartedAt)
			}
			if out.FinishedAt != 0 && out.QueuedAt != 0 { // a request failed before it was queued has no E2EDelay
				m.E2EDelay(string(out.EventType), out.QueuedAt, out.FinishedAt)
			}
		}
		return ack
	}
}

// decisions observes the arrival allocator's decisions (E2EDelay: the
// allocator, not a delivery, makes an arrival request terminal); the
// worker's service answers no participations.
type decisions struct{ m *metrics.Worker }

func (decisions) Participated(asyncevent.Participation, error) {}

func (d decisions) Decided(x asyncevent.Decision) {
	d.m.E2EDelay(string(x.EventType), x.QueuedAt, x.FinishedAt)
}
