package photo

import (
	"context"
	"fmt"
	"time"
)

// TimingPoint is a timing point (a mat) of an event, where runners' split
// times are taken.
type TimingPoint struct {
	ID        string `json:"pointId"`
	EventID   string `json:"eventId"`
	Name      string `json:"name"`
	DistanceM int    `json:"distanceM" doc:"Distance from the start, in metres."`
}

// Position is where a photographer stands in an event: at a timing point
// (PointID), OffsetSeconds after runners cross it (negative: before), or
// at a distance from the start (DistanceM), timed between the timing
// points around it.
type Position struct {
	EventID        string `json:"eventId"`
	PhotographerID string `json:"photographerId"`
	PointID        string `json:"pointId,omitempty"`
	OffsetSeconds  int    `json:"offsetSeconds"`
	DistanceM      *int   `json:"distanceM,omitempty"`
	// ClockOffsetSeconds is the photographer's camera clock offset (see
	// Timing.SetClock), read with the position.
	ClockOffsetSeconds int `json:"clockOffsetSeconds" doc:"The photographer's camera clock offset: true time minus the camera's, in seconds."`
}

// Split is a runner's split time: when a bib crossed a timing point.
type Split struct {
	Bib     string    `json:"bib"`
	PointID string    `json:"pointId"`
	At      time.Time `json:"at"`
}

// Timing limits.
const (
	// MaxOffsetSeconds bounds a position's offset and a camera clock's
	// offset: a day either way.
	MaxOffsetSeconds = 86400
	// MaxDistanceM bounds a distance from the start: 1,000 km.
	MaxDistanceM = 1_000_000
	// MaxPositions bounds the photographers positioned in one event: the
	// search by passing time reads one stream per positioned photographer,
	// merged in one page (ddb.MaxMergeStreams).
	MaxPositions = 32
	// MaxSplitsImport bounds one split import.
	MaxSplitsImport = 50000
)

// Timing is the organizers' role over race timing: timing points,
// photographers' positions and camera clocks, and runners' split times,
// which the search by passing time (Search.Nearby) reads. photo-api builds
// it (services/internal/photobackend) for its timing routes. It is safe
// for concurrent use.
type Timing struct {
	cfg TimingConfig
}

// TimingConfig configures a Timing.
type TimingConfig struct {
	// Store keeps the timing (pgstore).
	Store TimingStore
	// Now returns the time a split may not be after, give or take
	// MaxClockSkew (default time.Now).
	Now func() time.Time
}

// NewTiming returns a Timing.
func NewTiming(cfg TimingConfig) *Timing {
	cfg.Now = defaultNow(cfg.Now)
	return &Timing{cfg: cfg}
}

// PutTimingPoint creates or replaces a timing point of an event of org.
func (t *Timing) PutTimingPoint(ctx context.Context, org string, p TimingPoint) (TimingPoint, error) {
	var ps problems
	checkID(&ps, "pointId", p.ID)
	checkText(&ps, "name", p.Name, true, MaxNameLen)
	if p.DistanceM < 0 || p.DistanceM > MaxDistanceM {
		ps.add("distanceM", fmt.Sprintf("must be between 0 and %d", MaxDistanceM), p.DistanceM)
	}
	if err := ps.err(); err != nil {
		return TimingPoint{}, err
	}
	return t.cfg.Store.PutTimingPoint(ctx, org, p)
}

// TimingPoints lists an event's timing points by distance.
func (t *Timing) TimingPoints(ctx context.Context, org, event string) ([]TimingPoint, error) {
	return t.cfg.Store.TimingPoints(ctx, org, event)
}

// SetPosition sets where a photographer assigned to an event stands: at a
// timing point (with an offset in seconds) or at a distance, not both.
func (t *Timing) SetPosition(ctx context.Context, org string, p Position) (Position, error) {
	var ps problems
	switch {
	case p.PointID != "" && p.DistanceM != nil:
		ps.add("pointId", "give pointId (with offsetSeconds) or distanceM, not both", nil)
	case p.PointID != "":
		checkID(&ps, "pointId", p.PointID)
	case p.DistanceM == nil:
		ps.add("pointId", "give pointId (with offsetSeconds) or distanceM", nil)
	case *p.DistanceM < 0 || *p.DistanceM > MaxDistanceM:
		ps.add("distanceM", fmt.Sprintf("must be between 0 and %d", MaxDistanceM), *p.DistanceM)
	case p.OffsetSeconds != 0:
		ps.add("offsetSeconds", "applies to a position at a timing point only", p.OffsetSeconds)
	}
	if p.OffsetSeconds < -MaxOffsetSeconds || p.OffsetSeconds > MaxOffsetSeconds {
		ps.add("offsetSeconds", fmt.Sprintf("must be between %d and %d", -MaxOffsetSeconds, MaxOffsetSeconds), p.OffsetSeconds)
	}
	if err := ps.err(); err != nil {
		return Position{}, err
	}
	return t.cfg.Store.SetPosition(ctx, org, p)
}

// Positions lists an event's photographers' positions.
func (t *Timing) Positions(ctx context.Context, org, event string) ([]Position, error) {
	return t.cfg.Store.Positions(ctx, org, event)
}

// SetClock sets a photographer's camera clock offset: true time minus the
// camera's, in seconds. Photos keep the camera's time (createdAt); the
// search by passing time adds the offset, so a correction applies to the
// photos already taken.
func (t *Timing) SetClock(ctx context.Context, org, photographer string, seconds int) error {
	if seconds < -MaxOffsetSeconds || seconds > MaxOffsetSeconds {
		return Invalid("offsetSeconds", fmt.Sprintf("must be between %d and %d", -MaxOffsetSeconds, MaxOffsetSeconds), seconds)
	}
	return t.cfg.Store.SetClock(ctx, org, photographer, seconds)
}

// ImportSplits validates and upserts runners' split times. The whole
// import is refused, naming each bad row (splits[i].field), if any row is
// invalid: a malformed bib, a timing point the event does not have, an
// implausible time, or a (bib, point) given twice. A re-import of the same
// splits writes nothing.
func (t *Timing) ImportSplits(ctx context.Context, org, event string, ss []Split) (int, error) {
	if len(ss) == 0 {
		return 0, Invalid("splits", "is empty", nil)
	}
	if len(ss) > MaxSplitsImport {
		return 0, Invalid("splits", fmt.Sprintf("holds more than %d splits", MaxSplitsImport), len(ss))
	}
	points, err := t.cfg.Store.TimingPoints(ctx, org, event)
	if err != nil {
		return 0, err
	}
	known := make(map[string]bool, len(points))
	for _, p := range points {
		known[p.ID] = true
	}
	var ps problems
	seen := make(map[[2]string]int, len(ss))
	latest := t.cfg.Now().Add(MaxClockSkew)
	for i, s := range ss {
		switch {
		case !ValidBib(s.Bib):
			ps.add(fmt.Sprintf("splits[%d].bib", i), "must match "+BibPattern, printable(s.Bib))
		case !known[s.PointID]:
			ps.add(fmt.Sprintf("splits[%d].pointId", i), "is not a timing point of the event", printable(s.PointID))
		default:
			k := [2]string{s.Bib, s.PointID}
			if j, dup := seen[k]; dup {
				ps.add(fmt.Sprintf("splits[%d].bib", i), fmt.Sprintf("repeats splits[%d].bib", j), s.Bib)
			}
			seen[k] = i
		}
		if msg := implausible(s.At, latest); msg != "" {
			ps.add(fmt.Sprintf("splits[%d].at", i), msg, ISOMillis(s.At))
		}
		if len(ps.list) > 50 {
			break
		}
	}
	if err := ps.err(); err != nil {
		return 0, err
	}
	out := make([]Split, len(ss))
	for i, s := range ss {
		out[i] = Split{Bib: s.Bib, PointID: s.PointID, At: MillisUTC(s.At)}
	}
	return t.cfg.Store.ImportSplits(ctx, org, event, out)
}
