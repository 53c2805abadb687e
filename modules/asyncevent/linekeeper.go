package asyncevent

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"
)

// LineKeeper measures the lines of the events its process's Worker
// handles messages of (Line), about once a LineEvery each, and stores
// them, so that the API shows a request its place without counting the
// line. Every worker process builds one and runs its Run loop; the API
// process builds none. Each measurement reads the event's index only
// from where the last one settled (docs/capacity.md, Place in line, says
// what that costs), and its write is conditional on the line it read, so
// of two keepers measuring at once one stores. It is safe for concurrent
// use.
type LineKeeper struct {
	cfg   LineKeeperConfig
	kicks chan string
}

// LineKeeperConfig configures a LineKeeper.
type LineKeeperConfig struct {
	// Store reads the index's times and the allocator's position, and
	// stores the lines.
	Store LineStore
	// Events reads an event's type and ordering (through Cache).
	Events EventReader
	Cache  *EventCache
	// Lateness is every process's (see Lateness): a measurement settles
	// what was queued before now − Lateness.Max.
	Lateness Lateness
	// LineEvery is how often an event's line is measured while its
	// messages come (default 1 s).
	LineEvery time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
}

// DefaultLineEvery is LineKeeperConfig.LineEvery's default.
const DefaultLineEvery = time.Second

func (c LineKeeperConfig) withDefaults() LineKeeperConfig {
	if c.LineEvery <= 0 {
		c.LineEvery = DefaultLineEvery
	}
	if c.Cache == nil {
		c.Cache = NewEventCache(0)
	}
	c.Lateness = c.Lateness.withDefaults()
	c.Now, c.Log = defaultNow(c.Now), defaultLog(c.Log)
	return c
}

// NewLineKeeper returns a LineKeeper over cfg.Store.
func NewLineKeeper(cfg LineKeeperConfig) *LineKeeper {
	return &LineKeeper{cfg: cfg.withDefaults(), kicks: make(chan string, 1024)}
}

// Kick tells the Run loop that a message of eventID came.
func (k *LineKeeper) Kick(eventID string) {
	select {
	case k.kicks <- eventID:
	default: // the loop is behind; the next message kicks again
	}
}

// Run measures, every LineEvery, each event kicked within the last
// Lateness.Max plus two periods (so that the measurement after the last
// request settles it), until ctx ends.
func (k *LineKeeper) Run(ctx context.Context) {
	keep := k.cfg.Lateness.Max() + 2*k.cfg.LineEvery
	runKicked(ctx, k.kicks, k.cfg.LineEvery, func(id string, last time.Time) bool {
		if _, err := k.Measure(ctx, id); err != nil && ctx.Err() == nil {
			k.cfg.Log.Warn("asyncevent: measuring the line failed", "eventId", id, "err", err)
		}
		return time.Since(last) <= keep
	})
}

// Measure measures eventID's line and stores it, unless it was measured
// less than LineEvery ago (by this keeper or another): it returns the
// line stored then. A delivery-ordered event has none (nil). It reads the index from where the stored line
// settled (from the allocator's position, or the start, the first time)
// to now: the requests of about Lateness.Max + LineEvery.
func (k *LineKeeper) Measure(ctx context.Context, eventID string) (*Line, error) {
	now := k.cfg.Now().UnixMilli()
	cfg, err := k.cfg.Cache.get(ctx, k.cfg.Events, eventID)
	if err != nil {
		return nil, err
	}
	if cfg.EventType == FirstCome && cfg.Ordering == OrderDelivery {
		return nil, nil // its places show the seats left only: no line
	}
	old, err := k.cfg.Store.GetLine(ctx, eventID)
	if err != nil {
		return nil, err
	}
	if old != nil && now-old.MeasuredAt < k.cfg.LineEvery.Milliseconds()*9/10 {
		return old, nil
	}
	arrival := cfg.EventType == FirstCome
	l := &Line{EventID: eventID, MeasuredAt: now, Settled: now - k.cfg.Lateness.Max().Milliseconds(), TTL: cfg.TTL}
	var pos int64
	if arrival {
		// The position and the seats left come from one read: the
		// allocator writes both in each allocation.
		c, err := k.cfg.Store.GetCapacity(ctx, eventID)
		if err != nil {
			return nil, err
		}
		pos, l.SeatsLeft, l.SeatsKnown = c.AllocQueuedAt, c.CapacityRemaining, true
	}
	from, base := pos, int64(0)
	var settled []LinePoint
	if old != nil {
		l.Version = old.Version
		// The settled points stay; the rest is read again.
		for _, p := range old.Points {
			if p.At <= old.Settled {
				settled = append(settled, p)
			}
		}
		if n := len(settled); n > 0 {
			from, base = settled[n-1].At, settled[n-1].Count
			settled = settled[:n-1]
		}
	}
	l.Settled = max(l.Settled, from)
	times, err := k.cfg.Store.QueuedTimes(ctx, eventID, from, now+1)
	if err != nil {
		return nil, err
	}
	slices.Sort(times)
	l.Points = append(settled, bucketPoints(from, base, times, l.Settled, now+1)...)
	if arrival {
		l.Through, l.ThroughBound, _ = l.countAt(pos + 1)
		l.Points = trimBefore(l.Points, pos)
		if old != nil && now > old.MeasuredAt && old.Through <= l.Through {
			rate := float64(l.Through-old.Through) * 1000 / float64(now-old.MeasuredAt)
			l.Rate = rate
			if old.Rate > 0 {
				l.Rate = (old.Rate + rate) / 2
			}
		}
	}
	l.Points = mergePoints(l.Points)
	if err := k.cfg.Store.PutLine(ctx, l); err != nil {
		if errors.Is(err, ErrLineMeasured) {
			return k.cfg.Store.GetLine(ctx, eventID)
		}
		return nil, err
	}
	l.Version++
	return l, nil
}
