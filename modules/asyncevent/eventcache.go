package asyncevent

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultEventCacheTTL is how long an EventCache reuses an EventConfig
// read unless told otherwise.
const DefaultEventCacheTTL = 2 * time.Second

// maxCachedEvents and maxNotedEvents bound an EventCache's memory.
const (
	maxCachedEvents = 10000
	maxNotedEvents  = 10000
)

// EventCache is one process's knowledge of events, shared by the roles
// that process builds (give every role of a process the same one): the
// EventConfigs read, reused in process for a TTL, and the open FIRST_COME
// events Ingest admitted a participation to since Operations.CheckCapacity
// last listed the open events (so that a bounded check looks at those
// first). A role that changes an event (Admin.CloseEvent, Admin.Draw)
// drops it from the cache at once, so that the Ingest sharing it stops
// admitting at once too; other processes see the change within the TTL
// (docs/asyncevent.md on the event cache). It is safe for concurrent use.
type EventCache struct {
	ttl time.Duration

	mu     sync.Mutex
	events map[string]cachedEvent
	// forgets counts forget calls: a read that began before one is not
	// cached (it may hold the status the change replaced).
	forgets uint64

	// noting is set once a capacity check started noting (startNoting);
	// noted holds the events noted since its last listing (under mu).
	noting atomic.Bool
	noted  map[string]bool
}

type cachedEvent struct {
	cfg     *EventConfig
	expires time.Time
}

// NewEventCache returns an empty cache keeping each read for ttl (0:
// DefaultEventCacheTTL; negative: no caching, every read goes to the
// store).
func NewEventCache(ttl time.Duration) *EventCache {
	if ttl == 0 {
		ttl = DefaultEventCacheTTL
	}
	return &EventCache{ttl: ttl, events: map[string]cachedEvent{}}
}

// get returns eventID's EventConfig, from the cache when fresh, else read
// from events (strongly consistent) and cached.
func (c *EventCache) get(ctx context.Context, events EventReader, eventID string) (*EventConfig, error) {
	c.mu.Lock()
	cached, ok := c.events[eventID]
	gen := c.forgets
	c.mu.Unlock()
	if c.ttl > 0 && ok && time.Now().Before(cached.expires) {
		return cached.cfg, nil
	}
	// Strongly consistent: an eventually consistent read could return the
	// status before a change (a close, a draw) and cache it for the TTL.
	cfg, err := events.GetEvent(ctx, eventID, true)
	if err != nil {
		return nil, err
	}
	c.put(cfg, gen)
	return cfg, nil
}

// put caches cfg, read when forgets was gen, unless a change was
// forgotten since.
func (c *EventCache) put(cfg *EventConfig, gen uint64) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgets != gen {
		return
	}
	if len(c.events) > maxCachedEvents { // bound memory: drop everything, it refills
		clear(c.events)
	}
	c.events[cfg.EventID] = cachedEvent{cfg: cfg, expires: time.Now().Add(c.ttl)}
}

// forget drops a changed event from the cache, and keeps reads that were
// in flight from caching what they read.
func (c *EventCache) forget(eventID string) {
	c.mu.Lock()
	delete(c.events, eventID)
	c.forgets++
	c.mu.Unlock()
}

// noteOpen notes an open FIRST_COME event a participation was just
// admitted to, once a capacity check started noting: CheckCapacity looks
// at it first, and its next listing keeps it (a listing in flight may
// have passed its key). A process that never checks capacity (a worker)
// notes nothing.
func (c *EventCache) noteOpen(cfg *EventConfig) {
	if !c.noting.Load() || cfg.Status != EventOpen || cfg.EventType != FirstCome {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.noted) < maxNotedEvents {
		c.noted[cfg.EventID] = true
	}
}

// startNoting makes noteOpen note from now on.
func (c *EventCache) startNoting() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.noted == nil {
		c.noted = map[string]bool{}
		c.noting.Store(true)
	}
}

// takeNoted returns the events noted so far and starts a new set: a
// listing calls it once its read is over, so that what was noted before
// or during the read is kept.
func (c *EventCache) takeNoted() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	noted := c.noted
	c.noted = map[string]bool{}
	return noted
}

// notedIDs returns the events noted since the last takeNoted, sorted.
func (c *EventCache) notedIDs() []string {
	c.mu.Lock()
	ids := make([]string, 0, len(c.noted))
	for id := range c.noted {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	slices.Sort(ids)
	return ids
}
