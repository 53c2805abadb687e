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
// Which events: those the store listed as open at its last listing, made
// at most every Config.OpenEventsEvery because on DynamoDB it scans the
// whole table, and those this service has read since, each still open
// and FIRST_COME by its config (cached briefly, Config.EventCacheTTL).
func (s *Service) CheckCapacity(ctx context.Context, max int) (checked int, broken []string, err error) {
	ids, err := s.openEvents(ctx)
	if err != nil {
		return 0, nil, err
	}
	for _, id := range ids {
		if checked >= max {
			break
		}
		cfg, err := s.event(ctx, id)
		if errors.Is(err, ErrEventNotFound) {
			continue
		}
		if err != nil {
			return checked, broken, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if cfg.Status != EventOpen || cfg.EventType != FirstCome {
			continue
		}
		st, err := s.EventStats(ctx, id)
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

// openEvents returns the ids CheckCapacity looks at, sorted: the store's
// open FIRST_COME events, listed again once OpenEventsEvery has passed
// since the last listing, and the events noted since (noteOpen). The
// listing runs without openMu, so that participations noting their event
// never wait for a Scan.
func (s *Service) openEvents(ctx context.Context) ([]string, error) {
	s.listMu.Lock() // one listing at a time
	defer s.listMu.Unlock()
	now := s.cfg.Now()
	s.openMu.Lock()
	due := s.open == nil || s.cfg.OpenEventsEvery < 0 || now.Sub(s.openAt) >= s.cfg.OpenEventsEvery
	s.openMu.Unlock()
	if due {
		listed := map[string]bool{}
		for cfg, err := range s.store.OpenEvents(ctx, FirstCome) {
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			listed[cfg.EventID] = true
		}
		s.openMu.Lock()
		s.open, s.openAt = listed, now
		s.openMu.Unlock()
	}
	s.openMu.Lock()
	ids := make([]string, 0, len(s.open))
	for id := range s.open {
		ids = append(ids, id)
	}
	s.openMu.Unlock()
	slices.Sort(ids)
	return ids, nil
}

// maxNotedEvents bounds the events noted between two listings.
const maxNotedEvents = 10000

// noteOpen adds an open FIRST_COME event this service has read to the
// events CheckCapacity looks at until the next listing.
func (s *Service) noteOpen(cfg *EventConfig) {
	if cfg.Status != EventOpen || cfg.EventType != FirstCome {
		return
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if s.open != nil && !s.open[cfg.EventID] && len(s.open) < maxNotedEvents {
		s.open[cfg.EventID] = true
	}
}
