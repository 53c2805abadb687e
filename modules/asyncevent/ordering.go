package asyncevent

import (
	"cmp"
	"fmt"
)

// Ordering is how a FIRST_COME event picks its N winners.
type Ordering string

// The orderings.
const (
	// OrderDelivery decides each request when a worker takes its message,
	// in the order the queue delivers (one message at a time, the first
	// design; docs/fairness.md): a
	// standard SQS queue promises no order, so the winners are about, not
	// exactly, the first N by queuedAt.
	OrderDelivery Ordering = "delivery"
	// OrderArrival decides in (queuedAt, requestId) order: workers make
	// requests candidates (PROCESSING, uiPhase ALLOCATING) and a per-event
	// allocator decides them in that order once no earlier request can
	// still appear (the watermark, see Lateness.Max), so the winners
	// are exactly the first N whatever the delivery order.
	OrderArrival Ordering = "arrival"
)

// DefaultOrdering is the ordering of a FIRST_COME event created without
// one (see docs/fairness.md for why).
const DefaultOrdering = OrderArrival

// Valid reports whether o is a known ordering.
func (o Ordering) Valid() bool { return o == OrderDelivery || o == OrderArrival }

// Position is a request's place in the fairness order: (queuedAt,
// requestId), the order of the event index (GSI2).
type Position struct {
	QueuedAt  int64
	RequestID string
}

// PositionOf is r's position.
func PositionOf(r *Request) Position { return Position{r.QueuedAt, r.RequestID} }

// Compare orders positions: negative if p comes first.
func (p Position) Compare(q Position) int {
	return cmp.Or(cmp.Compare(p.QueuedAt, q.QueuedAt), cmp.Compare(p.RequestID, q.RequestID))
}

func (p Position) String() string { return fmt.Sprintf("%d/%s", p.QueuedAt, p.RequestID) }
