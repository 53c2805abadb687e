package asynceventworker

import (
	"context"
	"log/slog"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
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

// Handler adapts w.Process to the consumer runtime: it returns whether
// the message may be deleted, logs deliveries that are not done, and, when
// m is not nil, observes each delivery (outcome, time in the handler, in
// flight) and counts the requests it decides.
//
// With q set, a delivery that is not done on its last processing receive
// (ReceiveCount ≥ asyncevent.DeadLetterReceive(MaxReceives), one before
// the last receive SQS allows) is sent to the DLQ tagged with its class
// (asyncevent.DeadClassOf) and then acked, so the consumer deletes it from
// the main queue. If the send fails the message is left, and SQS moves it
// untagged on its next receive (class UNKNOWN); if the delete fails, SQS
// moves a second, untagged copy, which the DLQ view and the class redrive
// collapse (see sqsqueue.Queue.SendDead). A message left on the queue with
// an Outcome.RetryAfter (an arrival candidate) comes back after that
// instead of after the visibility timeout. A message that comes back after
// its last processing receive (its worker vanished, or could not send it
// to the DLQ) is not processed again: Worker.Lost records the loss on
// its request, and the message is made visible at once so that SQS moves
// it to the DLQ on its next receive.
func Handler(w *asyncevent.Worker, log *slog.Logger, m *asynceventbackend.WorkerMetrics, q Queue) consumer.Handler {
	return func(ctx context.Context, msg consumer.Message) bool {
		var done func(string)
		if m != nil {
			done = m.Start()
		}
		d := asyncevent.Delivery{Body: msg.Body, ReceiveCount: msg.ReceiveCount, SentAt: msg.SentAt}
		last := 0 // the receive this worker dead-letters on (0: no DLQ)
		if q != nil && q.MaxReceives() > 0 {
			last = asyncevent.DeadLetterReceive(q.MaxReceives())
		}
		if last > 0 && q.MaxReceives() > last && msg.ReceiveCount > last {
			// The worker that held the last processing receive vanished:
			// record it, and let SQS move the message at once.
			out := w.Lost(ctx, d)
			if !out.Ack {
				log.Warn("asyncevent: message back after its last processing receive; recorded, SQS moves it to the DLQ", "messageId", msg.ID, "receives", msg.ReceiveCount, "err", out.Err)
				if err := q.Delay(ctx, msg.ReceiptHandle, 0); err != nil {
					log.Warn("asyncevent: could not release a lost message", "messageId", msg.ID, "err", err)
				}
			}
			if m != nil {
				done(asynceventbackend.Outcome(out))
			}
			return out.Ack
		}
		out := w.Process(ctx, d)
		if out.Err != nil {
			log.Warn("asyncevent: message not done", "messageId", msg.ID, "result", out.Result, "receives", msg.ReceiveCount, "ack", out.Ack, "err", out.Err)
		}
		ack := out.Ack
		if !ack && last > 0 && msg.ReceiveCount >= last {
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
			done(asynceventbackend.Outcome(out))
			if out.FinishedAt != 0 {
				m.Decided(string(out.EventType))
			}
		}
		return ack
	}
}

// decisions counts the arrival allocator's decisions (the allocator, not a
// delivery, makes an arrival request terminal).
type decisions struct {
	m *asynceventbackend.WorkerMetrics
}

func (d decisions) Decided(x asyncevent.Decision) {
	d.m.Decided(string(x.EventType))
}
