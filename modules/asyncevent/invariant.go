package asyncevent

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// CheckCapacity checks the capacity invariant (capacityTotal −
// capacityRemaining == #SUCCEEDED, see EventStats) on up to max open
// FIRST_COME events, and returns how many it checked and the ids of those
// that fail it. It reads each one's requests (through GSI2, which lags
// writes briefly): for a periodic operator check, not for request paths.
//
// Which events: first those this service has admitted a participation to
// since the last listing (the events with traffic here, so that max does
// not leave them out), then those the store listed as open at its last listing, made at
// most every Config.OpenEventsEvery (on DynamoDB a Query of the open events'
// partition, paged); each one still open and FIRST_COME by its config (one
// strongly consistent read, which its counts then use).
func (s *Service) CheckCapacity(ctx context.Context, max int) (checked int, broken []string, err error) {
	ids, err := s.openEvents(ctx)
	if err != nil {
		return 0, nil, err
	}
	for _, id := range ids {
		if checked >= max {
			break
		}
		cfg, err := s.store.GetEvent(ctx, id, true)
		if errors.Is(err, ErrEventNotFound) {
			continue
		}
		if err != nil {
			return checked, broken, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if cfg.Status != EventOpen || cfg.EventType != FirstCome {
			continue
		}
		st, err := s.eventStats(ctx, cfg, false)
		if err != nil {
			return checked, broken, err
		}
		checked++
		if !st.InvariantOK {
			broken = append(broken, id)
		}
	}
	return checked, broken, nil
}

// openEvents returns the ids CheckCapacity looks at: first the events
// noted since the last listing (noteOpen: those with traffic here, the
// ones a bounded check must not miss), then the rest of the store's open
// FIRST_COME events, each part sorted. The store is listed again once
// OpenEventsEvery has passed since the last listing; the listing runs
// without openMu, so that participations noting their event never wait
// for a listing, and what they note meanwhile is kept.
func (s *Service) openEvents(ctx context.Context) ([]string, error) {
	s.listMu.Lock() // one listing at a time
	defer s.listMu.Unlock()
	now := s.cfg.Now()
	s.openMu.Lock()
	due := s.open == nil || s.cfg.OpenEventsEvery < 0 || now.Sub(s.openAt) >= s.cfg.OpenEventsEvery
	if s.noted == nil {
		s.noted = map[string]bool{} // this service checks capacity: note from now on
		s.checking.Store(true)
	}
	s.openMu.Unlock()
	if due {
		listed := map[string]bool{}
		for id, err := range s.store.OpenEvents(ctx, FirstCome) {
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			listed[id] = true
		}
		s.openMu.Lock()
		for id := range s.noted { // noted before or during the listing: kept
			listed[id] = true
		}
		s.open, s.openAt, s.noted = listed, now, map[string]bool{}
		s.openMu.Unlock()
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	noted := make([]string, 0, len(s.noted))
	for id := range s.noted {
		noted = append(noted, id)
	}
	rest := make([]string, 0, len(s.open))
	for id := range s.open {
		if !s.noted[id] {
			rest = append(rest, id)
		}
	}
	slices.Sort(noted)
	slices.Sort(rest)
	return append(noted, rest...), nil
}

// maxNotedEvents bounds the events noted between two listings.
const maxNotedEvents = 10000

// noteOpen notes an open FIRST_COME event this service has just admitted
// a participation to: CheckCapacity looks at it first, and the next
// listing keeps it (a listing in flight may have passed its key). A
// service that never checks capacity (a worker) notes nothing.
func (s *Service) noteOpen(cfg *EventConfig) {
	if !s.checking.Load() || cfg.Status != EventOpen || cfg.EventType != FirstCome {
		return
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if s.noted != nil && len(s.noted) < maxNotedEvents {
		s.noted[cfg.EventID] = true
	}
}
