package asynceventapi

import (
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

// NewEventLimiter applies the events' own budgets
// (asyncevent.EventLimiter) with l's buckets: one per event and client
// address (its /64 for IPv6), each the replica's share of the event's
// budget, as the deployment's are (docs/ratelimit.md, Per event). Nil
// when l is.
func NewEventLimiter(l *ratelimit.Limiter) asyncevent.EventLimiter {
	if l == nil {
		return nil
	}
	return eventLimiter{l}
}

type eventLimiter struct{ l *ratelimit.Limiter }

func (e eventLimiter) AllowParticipation(eventID, addr string, b asyncevent.Budget) (bool, time.Duration) {
	n, per, err := b.Parse()
	if err != nil || n == 0 { // CreateEvent stores valid budgets only
		return true, 0
	}
	rule := ratelimit.Rule{Rate: float64(n) / per.Seconds(), Burst: n}
	return e.l.AllowRule("participate", ratelimit.ByEventAddress, eventID+" "+ratelimit.AddressKey(addr), rule)
}
