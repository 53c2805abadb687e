package asyncevent

import "time"

// Lateness bounds how late a request's queuedAt can become visible in the
// event index, which makes the arrival allocator's safety margin (Max):
// the allocator decides only requests queued before now − Max. Its parts
// bound the processes that stamp queuedAt (Ingest, Worker, Operations'
// re-queues) and the index they write to, so every role of every process
// must be given the same Lateness: the allocator's margin holds only if
// the writers keep their WriteTimeout. The zero value is the defaults.
type Lateness struct {
	// WriteTimeout bounds each write that records a queuedAt (ingest's
	// RECEIVED → QUEUED, a worker's RECEIVED → PROCESSING, a re-queue's):
	// the write is given up after it (default 2 s).
	WriteTimeout time.Duration
	// ClockSkew is the most the clocks of the processes that stamp
	// queuedAt may differ from the allocator's (default 500 ms; negative
	// for none).
	ClockSkew time.Duration
	// IndexLag is the most the event index (GSI2, eventually consistent)
	// may lag a write (default 1 s; negative for none, as on DynamoDB
	// Local). The event counts (Admin.EventStats, Operations.
	// CheckCapacity) read again after it when they look broken.
	IndexLag time.Duration
}

// withDefaults returns l with every unset part at its default.
func (l Lateness) withDefaults() Lateness {
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = 2 * time.Second
	}
	if l.ClockSkew == 0 {
		l.ClockSkew = 500 * time.Millisecond
	}
	if l.IndexLag == 0 {
		l.IndexLag = time.Second
	}
	return l
}

// Max is the most a request's queuedAt may lie in the past when its
// QUEUED write becomes visible in the event index: WriteTimeout +
// ClockSkew + IndexLag, each at its default when unset (Lateness{}.Max()
// is 3.5 s). The arrival allocator decides only requests queued before
// now − Max.
func (l Lateness) Max() time.Duration {
	l = l.withDefaults()
	return l.WriteTimeout + max(l.ClockSkew, 0) + max(l.IndexLag, 0)
}

// indexLag is how long a count that looks broken waits before reading
// again: IndexLag, at least 100 ms.
func (l Lateness) indexLag() time.Duration {
	return max(l.withDefaults().IndexLag, 100*time.Millisecond)
}
