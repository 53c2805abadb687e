package asyncevent

import (
	"strconv"
	"time"
)

// PollAfter is how long a client polling r had best wait before it reads
// r again, or 0 when nothing is known (the client polls on its own
// schedule) or r is decided. An arrival candidate (PROCESSING in uiPhase
// ALLOCATING) is decided no sooner than Lateness.Max after its queuedAt,
// when the allocator's watermark passes it (docs/fairness.md): a read
// before then can only find it waiting still.
func (q *Query) PollAfter(r *Request) time.Duration {
	return PollAfter(r, q.cfg.Now(), q.cfg.Lateness.Max())
}

// PollAfter is Query.PollAfter for a Query whose clock reads now and
// whose Lateness.Max is maxLateness; a load generator that reads request
// items itself gives its clients the same hint the API would.
func PollAfter(r *Request, now time.Time, maxLateness time.Duration) time.Duration {
	if !r.candidate() || r.QueuedAt <= 0 {
		return 0
	}
	return max(0, time.Duration(r.QueuedAt-now.UnixMilli())*time.Millisecond+maxLateness)
}

// RetryAfter is a PollAfter hint as an HTTP Retry-After value: whole
// seconds, rounded up (a client never polls early), or "" (no header)
// for 0.
func RetryAfter(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}
