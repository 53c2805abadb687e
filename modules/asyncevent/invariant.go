package asyncevent

import (
	"context"
	"fmt"
)

// CheckCapacity checks the capacity invariant (capacityTotal −
// capacityRemaining == #SUCCEEDED, see EventStats) on up to max open
// FIRST_COME events, and returns how many it checked and the ids of those
// that fail it. It scans the table for the open events and reads each
// one's requests (through GSI2, which lags writes briefly): for a periodic
// operator check, not for request paths.
func (s *Service) CheckCapacity(ctx context.Context, max int) (checked int, broken []string, err error) {
	for cfg, err := range s.store.OpenEvents(ctx, FirstCome) {
		if err != nil {
			return checked, broken, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if checked >= max {
			break
		}
		st, err := s.EventStats(ctx, cfg.EventID)
		if err != nil {
			return checked, broken, err
		}
		checked++
		if !st.InvariantOK {
			broken = append(broken, cfg.EventID)
		}
	}
	return checked, broken, nil
}
