package asyncevent

// Observer hears what the service answers, for metrics (the services
// export it; the domain knows no metrics library). It is called
// synchronously: it must be fast and must not block.
type Observer interface {
	// Participated reports a Participate call: its answer when err is
	// nil (p.IsDuplicate for a duplicate), else the error it refused with.
	Participated(p Participation, err error)
}
