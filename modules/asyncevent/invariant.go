package asyncevent

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// CheckCapacity checks the capacity invariant (capacityTotal −
// capacityRemaining == #SUCCEEDED, see Admin.EventStats) on up to max open
// FIRST_COME events, and returns how many it checked and the ids of those
// that fail it. It reads each one's requests (through GSI2, which lags
// writes briefly): for a periodic operator check, not for request paths.
//
// Which events: first those the process's Ingest (sharing this
// Operations' EventCache) has admitted a participation to since the last
// listing (the events with traffic here, so that max does not leave them
// out), then those the store listed as open at its last listing, made at
// most every OperationsConfig.OpenEventsEvery (on DynamoDB a Query of the
// open events' partition, paged); each one still open and FIRST_COME by
// its config (one strongly consistent read, which its counts then use).
func (o *Operations) CheckCapacity(ctx context.Context, max int) (checked int, broken []string, err error) {
	ids, err := o.openEvents(ctx)
	if err != nil {
		return 0, nil, err
	}
	for _, id := range ids {
		if checked >= max {
			break
		}
		cfg, err := o.cfg.Events.GetEvent(ctx, id, true)
		if errors.Is(err, ErrEventNotFound) {
			continue
		}
		if err != nil {
			return checked, broken, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if cfg.Status != EventOpen || cfg.EventType != FirstCome {
			continue
		}
		st, err := eventStats(ctx, o.cfg.Capacity, nil, cfg, o.cfg.Lateness)
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
// noted since the last listing (EventCache.noteOpen: those with traffic
// here, the ones a bounded check must not miss), then the rest of the
// store's open FIRST_COME events, each part sorted. The store is listed
// again once OpenEventsEvery has passed since the last listing; what the
// cache noted before or during the listing is kept with what it listed
// (participations note their event without waiting for a listing).
func (o *Operations) openEvents(ctx context.Context) ([]string, error) {
	o.listMu.Lock() // one listing at a time
	defer o.listMu.Unlock()
	now := o.cfg.Now()
	o.cfg.Cache.startNoting() // this process checks capacity: note from now on
	if o.open == nil || o.cfg.OpenEventsEvery < 0 || now.Sub(o.openAt) >= o.cfg.OpenEventsEvery {
		listed := map[string]bool{}
		for id, err := range o.cfg.Capacity.OpenEvents(ctx, FirstCome) {
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			listed[id] = true
		}
		for id := range o.cfg.Cache.takeNoted() { // noted before or during the listing: kept
			listed[id] = true
		}
		o.open, o.openAt = listed, now
	}
	noted := o.cfg.Cache.notedIDs()
	rest := make([]string, 0, len(o.open))
	for id := range o.open {
		if _, seen := slices.BinarySearch(noted, id); !seen {
			rest = append(rest, id)
		}
	}
	slices.Sort(rest)
	return append(noted, rest...), nil
}
