package photo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// The window of the search by passing time: how far from the runner's
// expected passing time a photo's corrected capture time may be.
const (
	DefaultWindow = 60 * time.Second
	MaxWindow     = 10 * time.Minute
)

// NearbyMatch says why a photo was found by time: the runner's split it
// was matched from, and when the runner was expected at the camera.
type NearbyMatch struct {
	// PointID and PointName name the timing point of the split: the
	// photographer's point, or for a photographer placed by distance the
	// last point before them.
	PointID   string    `json:"pointId"`
	PointName string    `json:"pointName"`
	SplitAt   time.Time `json:"splitAt" doc:"The runner's split time at the timing point."`
	// ExpectedAt is when the runner was expected in front of the camera:
	// the split plus the position's offset, or timed between the splits
	// around a position given by distance.
	ExpectedAt time.Time `json:"expectedAt" doc:"When the runner was expected in front of the camera."`
}

// NearbyPhoto is a photo found by the runner's passing time.
type NearbyPhoto struct {
	Photo *Photo
	Match NearbyMatch
	// CapturedAt is the photo's corrected capture time: createdAt (the
	// camera's clock) plus the photographer's clock offset.
	CapturedAt time.Time
	// HasBib: the photo already carries the bib (bib search finds it too).
	HasBib bool
}

// NearbyPage is a page of the search by passing time.
type NearbyPage struct {
	Bib    string
	Photos []NearbyPhoto
	Cursor string
}

// Nearby lists the photos of an event of org taken near when bib passed
// each camera: for each photographer with a position (Timing.SetPosition)
// and each split of the runner there, the photographer's photos whose
// corrected capture time is within window of the runner's expected
// passing time, as one timeline, earliest first, with one cursor. A page
// costs one Query per positioned photographer that still has photos in
// their range. A bib under a privacy request finds nothing, as a bib
// without splits does.
func (s *Search) Nearby(ctx context.Context, org, event, bib string, window time.Duration, r PageRequest) (NearbyPage, error) {
	defer s.searched(SearchNearby)()
	if err := checkNearby(bib, window, &r); err != nil {
		return NearbyPage{}, err
	}
	if _, err := s.cfg.Truth.Event(ctx, org, event); err != nil {
		return NearbyPage{}, err
	}
	return s.nearby(ctx, org, event, bib, window, r)
}

// PublicNearby is the runners' search by passing time: like Nearby, for
// any organizer's event, but only if it is published (else ErrNotFound).
func (s *Search) PublicNearby(ctx context.Context, event, bib string, window time.Duration, r PageRequest) (NearbyPage, error) {
	defer s.searched(SearchPublicNearby)()
	if err := checkNearby(bib, window, &r); err != nil {
		return NearbyPage{}, err
	}
	ev, err := s.cfg.Truth.PublishedEvent(ctx, event)
	if err != nil {
		return NearbyPage{}, err
	}
	return s.nearby(ctx, ev.OrganizerID, event, bib, window, r)
}

func checkNearby(bib string, window time.Duration, r *PageRequest) error {
	if err := CheckBib("bib", bib); err != nil {
		return err
	}
	if window < time.Second || window > MaxWindow {
		return Invalid("window", fmt.Sprintf("must be between 1 and %d seconds", int(MaxWindow/time.Second)), int(window/time.Second))
	}
	return checkPage(r, maxMergeCursor)
}

func (s *Search) nearby(ctx context.Context, org, event, bib string, window time.Duration, r PageRequest) (NearbyPage, error) {
	out := NearbyPage{Bib: bib, Photos: []NearbyPhoto{}}
	plan, err := s.cfg.Nearby.NearbyPlan(ctx, event, bib)
	if err != nil {
		return NearbyPage{}, err
	}
	if plan.Hidden {
		// The same answer as a bib without splits: nothing tells the two
		// apart. A cursor is not checked, as there is nothing to page.
		return out, nil
	}
	streams, matches := planStreams(plan, window)
	if len(streams) == 0 {
		return out, nil
	}
	p, err := s.cfg.Index.ByTime(ctx, TimeQuery{Org: org, Event: event, Streams: streams}, r)
	if err != nil {
		return NearbyPage{}, err
	}
	clock := make(map[string]time.Duration, len(streams))
	for _, st := range streams {
		clock[st.Photographer] = st.Clock
	}
	out.Cursor = p.Cursor
	for _, ph := range p.Photos {
		m, ok := matches[ph.PhotographerID]
		if !ok {
			continue // not of a stream asked for: cannot happen
		}
		out.Photos = append(out.Photos, NearbyPhoto{
			Photo: ph, Match: m, CapturedAt: ph.CreatedAt.Add(clock[ph.PhotographerID]).UTC(),
			HasBib: slices.Contains(ph.Bibs, bib),
		})
	}
	return out, nil
}

// planStreams turns a bib's plan into one stream per positioned
// photographer for whom the runner has an expected passing time, in
// photographer order (the cursor is bound to the streams in order), and
// each photographer's match.
func planStreams(p NearbyPlan, window time.Duration) ([]TimeStream, map[string]NearbyMatch) {
	names := make(map[string]TimingPoint, len(p.Points))
	for _, pt := range p.Points {
		names[pt.ID] = pt
	}
	// The runner's splits along the course, by distance.
	type mark struct {
		pt TimingPoint
		at time.Time
	}
	var marks []mark
	at := map[string]time.Time{}
	for _, sp := range p.Splits {
		if pt, ok := names[sp.PointID]; ok {
			marks = append(marks, mark{pt, sp.At})
			at[sp.PointID] = sp.At
		}
	}
	slices.SortFunc(marks, func(a, b mark) int {
		return cmp.Or(cmp.Compare(a.pt.DistanceM, b.pt.DistanceM), cmp.Compare(a.pt.ID, b.pt.ID))
	})
	var streams []TimeStream
	matches := map[string]NearbyMatch{}
	for _, pos := range p.Positions {
		var m NearbyMatch
		switch {
		case pos.PointID != "":
			t, ok := at[pos.PointID]
			if !ok {
				continue
			}
			m = NearbyMatch{PointID: pos.PointID, PointName: names[pos.PointID].Name, SplitAt: t, ExpectedAt: t.Add(time.Duration(pos.OffsetSeconds) * time.Second)}
		case pos.DistanceM != nil:
			d := *pos.DistanceM
			// The last split at or before the camera, and the first after.
			i := -1
			for j, mk := range marks {
				if mk.pt.DistanceM <= d {
					i = j
				}
			}
			if i < 0 {
				continue
			}
			lo := marks[i]
			m = NearbyMatch{PointID: lo.pt.ID, PointName: lo.pt.Name, SplitAt: lo.at, ExpectedAt: lo.at}
			if lo.pt.DistanceM < d {
				if i+1 >= len(marks) {
					continue // past the runner's last split: no pace to time it by
				}
				hi := marks[i+1]
				frac := float64(d-lo.pt.DistanceM) / float64(hi.pt.DistanceM-lo.pt.DistanceM)
				m.ExpectedAt = lo.at.Add(time.Duration(frac * float64(hi.at.Sub(lo.at))))
			}
		default:
			continue
		}
		m.ExpectedAt = MillisUTC(m.ExpectedAt)
		clock := time.Duration(pos.ClockOffsetSeconds) * time.Second
		streams = append(streams, TimeStream{
			Photographer: pos.PhotographerID, Clock: clock,
			From: m.ExpectedAt.Add(-window - clock), To: m.ExpectedAt.Add(window - clock),
		})
		matches[pos.PhotographerID] = m
	}
	slices.SortFunc(streams, func(a, b TimeStream) int { return cmp.Compare(a.Photographer, b.Photographer) })
	if len(streams) > MaxPositions {
		streams = streams[:MaxPositions] // the store refuses more positions; a backstop
	}
	return streams, matches
}
