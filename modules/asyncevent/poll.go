package asyncevent

import "time"

// PollAfter is how long a client polling r had best wait before it reads
// r again, or 0 when nothing is known (the client polls on its own
// schedule) or r is decided. An arrival candidate (PROCESSING in uiPhase
// ALLOCATING) is decided no sooner than MaxLateness after its queuedAt,
// when the allocator's watermark passes it (docs/fairness.md): a read
// before then can only find it waiting still.
func (s *Service) PollAfter(r *Request) time.Duration {
	if r.Status != StatusProcessing || r.UIPhase != PhaseAllocating || r.QueuedAt <= 0 {
		return 0
	}
	return max(0, time.Duration(r.QueuedAt-s.now())*time.Millisecond+s.cfg.MaxLateness())
}
