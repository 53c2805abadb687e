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
	at := PollAt(r, maxLateness)
	if at == 0 {
		return 0
	}
	return max(0, time.Duration(at-now.UnixMilli())*time.Millisecond)
}

// PollAt is when (epoch millis) the allocator's watermark passes r, an
// arrival candidate: its queuedAt + maxLateness. It is 0 for any other
// request, whose next change has no known earliest time.
func PollAt(r *Request, maxLateness time.Duration) int64 {
	if !r.candidate() || r.QueuedAt <= 0 {
		return 0
	}
	return r.QueuedAt + maxLateness.Milliseconds()
}

// PollAt is PollAt with q's Lateness.
func (q *Query) PollAt(r *Request) int64 { return PollAt(r, q.cfg.Lateness.Max()) }

// Unchanged reports whether a request that was an arrival candidate
// with PollAt pollAt surely still reads as it did: the allocator decides
// it only once its own clock passes pollAt, and that clock may run up to
// Lateness.ClockSkew ahead of q's, so q's clock must be earlier than
// pollAt by more than that. It lets the API answer a poll "not
// modified" without reading the table; it is false when pollAt is 0.
func (q *Query) Unchanged(pollAt int64) bool {
	skew := max(q.cfg.Lateness.withDefaults().ClockSkew, 0)
	return pollAt > 0 && q.cfg.Now().UnixMilli() < pollAt-skew.Milliseconds()
}

// Until is how long from q's now to pollAt (at least 0): the PollAfter of
// a request read earlier with that PollAt.
func (q *Query) Until(pollAt int64) time.Duration {
	return max(0, time.Duration(pollAt-q.cfg.Now().UnixMilli())*time.Millisecond)
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
