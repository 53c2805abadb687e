package asyncevent

// Observer hears what Ingest answers, for metrics (the services export
// it; the domain knows no metrics library). It is called synchronously:
// it must be fast and must not block.
type Observer interface {
	// Participated reports an Ingest.Participate call: its answer when err is
	// nil (p.IsDuplicate for a duplicate), else the error it refused with.
	Participated(p Participation, err error)
}

// HumanCheckObserver hears how each human check Ingest makes ends
// (IngestConfig.HumanChecks), for metrics. It is called synchronously:
// it must be fast and must not block.
type HumanCheckObserver interface {
	HumanChecked(o HumanOutcome)
}

// DecisionObserver hears each request the arrival allocator decides
// (AllocatorConfig.Observer), once, after the decision's transaction
// committed (a delivery decision is reported by Worker.Process's Outcome
// instead). It is called synchronously: it must be fast and must not
// block.
type DecisionObserver interface {
	Decided(d Decision)
}

// Decision is one request decided by the allocator: its event type and
// final status. (Its delays are measured from the stored times, by the
// analytics publisher.)
type Decision struct {
	EventType EventType
	Status    Status
}
