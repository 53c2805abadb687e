package asyncevent

import (
	"context"
	"errors"
)

// CodeWorkerLost is the error code a worker records on a request whose
// message came back after the last receive a worker may process it on
// (DeadLetterReceive): the worker holding that receive vanished (killed,
// or past the visibility timeout) or could not send the message to the
// DLQ.
const CodeWorkerLost = "WORKER_LOST"

// DeadLetterReceive is the receive on which a worker sends a message it
// could not finish to the DLQ itself, for a queue whose RedrivePolicy
// allows maxReceiveCount receives: one before SQS's last. The last receive
// SQS allows is kept for bookkeeping: it only happens when the worker
// holding the one before vanished (killed, or past the visibility timeout)
// or could not send the message to the DLQ, and the worker that gets it
// records the loss on the request (Lost) before SQS moves the message
// itself on the receive after. So every message that reaches the DLQ has
// its request marked (a retryable failure at attempt ≥ DeadLetterReceive,
// which the analytics count as dead-lettered), unless two workers in a row
// vanish on one message's last two receives. With maxReceiveCount 1 there
// is no receive to spare: the worker dead-letters on the first, and one
// that vanishes there is not recorded.
func DeadLetterReceive(maxReceiveCount int) int {
	return max(maxReceiveCount-1, 1)
}

// Lost handles a delivery past DeadLetterReceive (its receive count
// exceeds it): it does not process the message again but records the loss
// on the request (attempt = the receive count, CodeWorkerLost) and leaves
// the message to SQS, which moves it to the DLQ on its next receive. A
// request already terminal was decided before its worker vanished: the
// message is acked. A message that cannot be decoded names no request; it
// is left to SQS as well.
func (w *Worker) Lost(ctx context.Context, d Delivery) Outcome {
	msg, err := DecodeMessage(d.Body)
	if err != nil {
		return Outcome{Result: "lost", Err: err}
	}
	out := Outcome{Result: "lost", EventType: msg.EventType}
	err = w.cfg.Requests.RecordAttempt(context.WithoutCancel(ctx), Attempt{RequestID: msg.RequestID, Attempts: d.ReceiveCount, Code: CodeWorkerLost,
		Message: "the worker holding the message's last processing receive vanished or could not dead-letter it", At: w.now(), WorkerID: w.cfg.WorkerID})
	var se *StateError
	switch {
	case errors.As(err, &se) && se.Current != nil && se.Current.Status.Terminal():
		return Outcome{Ack: true, Result: "done-already", EventType: msg.EventType, Status: se.Current.Status}
	case err != nil:
		w.cfg.Log.Warn("asyncevent: could not record a lost delivery; SQS moves the message to the DLQ unrecorded", "requestId", msg.RequestID, "err", err)
		out.Err = err
	}
	return out
}
