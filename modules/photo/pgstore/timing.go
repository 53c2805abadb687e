package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

const pointCols = `point_id, event_id, name, distance_m`

// PutTimingPoint creates or replaces a timing point of an event of org
// (the composite foreign key refuses another organizer's event).
func (s *Store) PutTimingPoint(ctx context.Context, org string, p photo.TimingPoint) (photo.TimingPoint, error) {
	rows, err := s.pool.Query(ctx,
		`INSERT INTO timing_points (organizer_id, event_id, point_id, name, distance_m) VALUES ($1, $2, $3, $4, $5)
		 ON CONFLICT (event_id, point_id) DO UPDATE SET name = EXCLUDED.name, distance_m = EXCLUDED.distance_m, updated_at = now()
		 WHERE timing_points.organizer_id = EXCLUDED.organizer_id
		 RETURNING `+pointCols, org, p.EventID, p.ID, p.Name, p.DistanceM)
	if err != nil {
		return photo.TimingPoint{}, translate(err, "timing point", p.ID)
	}
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[photo.TimingPoint])
	return out, translate(err, "timing point", p.ID)
}

// TimingPoints lists an event of org's timing points by distance.
func (s *Store) TimingPoints(ctx context.Context, org, event string) ([]photo.TimingPoint, error) {
	if _, err := s.Event(ctx, org, event); err != nil {
		return nil, err
	}
	return s.points(ctx, event)
}

func (s *Store) points(ctx context.Context, event string) ([]photo.TimingPoint, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+pointCols+` FROM timing_points WHERE event_id = $1 ORDER BY distance_m, point_id`, event)
	if err != nil {
		return nil, translate(err, "timing points", event)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[photo.TimingPoint])
	return out, translate(err, "timing points", event)
}

const positionCols = `p.event_id, p.photographer_id, COALESCE(p.point_id, ''), p.offset_seconds, p.distance_m,
	COALESCE((SELECT c.offset_seconds FROM photographer_clocks c WHERE c.photographer_id = p.photographer_id), 0)`

// SetPosition creates or replaces the position of a photographer assigned
// to an event, both of org.
func (s *Store) SetPosition(ctx context.Context, org string, p photo.Position) (photo.Position, error) {
	id := p.EventID + "/" + p.PhotographerID
	var assigned bool
	var others int
	err := s.pool.QueryRow(ctx,
		`SELECT EXISTS (SELECT 1 FROM event_photographers WHERE organizer_id = $1 AND event_id = $2 AND photographer_id = $3),
		        (SELECT count(*) FROM photographer_positions WHERE event_id = $2 AND photographer_id <> $3)`,
		org, p.EventID, p.PhotographerID).Scan(&assigned, &others)
	switch {
	case err != nil:
		return photo.Position{}, translate(err, "position", id)
	case !assigned:
		return photo.Position{}, photo.NotFound("assignment", id)
	case others >= photo.MaxPositions:
		return photo.Position{}, photo.Invalid("eventId", fmt.Sprintf("has %d positioned photographers, the most a search by passing time reads", photo.MaxPositions), nil)
	}
	point := &p.PointID
	if p.PointID == "" {
		point = nil
	}
	rows, err := s.pool.Query(ctx,
		`WITH up AS (
		   INSERT INTO photographer_positions (event_id, photographer_id, point_id, offset_seconds, distance_m) VALUES ($1, $2, $3, $4, $5)
		   ON CONFLICT (event_id, photographer_id) DO UPDATE
		   SET point_id = EXCLUDED.point_id, offset_seconds = EXCLUDED.offset_seconds, distance_m = EXCLUDED.distance_m, updated_at = now()
		   RETURNING *)
		 SELECT `+positionCols+` FROM up p`,
		p.EventID, p.PhotographerID, point, p.OffsetSeconds, p.DistanceM)
	if err != nil {
		return photo.Position{}, translate(err, "position", id)
	}
	out, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[photo.Position])
	if err = translate(err, "timing point", p.PointID); errors.Is(err, photo.ErrNotFound) && p.PointID != "" {
		// A timing point the event does not have breaks the foreign key:
		// the body names it (the assignment was found above).
		return photo.Position{}, photo.Invalid("pointId", "is not a timing point of the event", p.PointID)
	}
	return out, err
}

// Positions lists an event of org's positions by photographer.
func (s *Store) Positions(ctx context.Context, org, event string) ([]photo.Position, error) {
	if _, err := s.Event(ctx, org, event); err != nil {
		return nil, err
	}
	return s.positions(ctx, event)
}

func (s *Store) positions(ctx context.Context, event string) ([]photo.Position, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+positionCols+` FROM photographer_positions p WHERE p.event_id = $1 ORDER BY p.photographer_id`, event)
	if err != nil {
		return nil, translate(err, "positions", event)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[photo.Position])
	return out, translate(err, "positions", event)
}

// SetClock sets the camera clock offset of a photographer of org.
func (s *Store) SetClock(ctx context.Context, org, photographer string, seconds int) error {
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO photographer_clocks (photographer_id, offset_seconds)
		 SELECT $2, $3 WHERE EXISTS (SELECT 1 FROM photographers WHERE organizer_id = $1 AND photographer_id = $2)
		 ON CONFLICT (photographer_id) DO UPDATE SET offset_seconds = EXCLUDED.offset_seconds, updated_at = now()`,
		org, photographer, seconds)
	if err != nil {
		return translate(err, "photographer", photographer)
	}
	if tag.RowsAffected() == 0 {
		return photo.NotFound("photographer", photographer)
	}
	return nil
}

// ImportSplits upserts splits of an event of org in one statement: all or
// nothing. Unchanged rows are not rewritten, so a re-import writes none.
func (s *Store) ImportSplits(ctx context.Context, org, event string, ss []photo.Split) (int, error) {
	bibs := make([]string, len(ss))
	points := make([]string, len(ss))
	ats := make([]time.Time, len(ss))
	for i, sp := range ss {
		bibs[i], points[i], ats[i] = sp.Bib, sp.PointID, sp.At
	}
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO runner_splits (event_id, bib, point_id, passed_at)
		 SELECT $2, t.bib, t.point, t.at FROM unnest($3::text[], $4::text[], $5::timestamptz[]) AS t(bib, point, at)
		 WHERE EXISTS (SELECT 1 FROM events WHERE organizer_id = $1 AND event_id = $2)
		 ON CONFLICT (event_id, bib, point_id) DO UPDATE SET passed_at = EXCLUDED.passed_at, updated_at = now()
		 WHERE runner_splits.passed_at <> EXCLUDED.passed_at`,
		org, event, bibs, points, ats)
	if err != nil {
		return 0, translate(err, "splits", event)
	}
	return int(tag.RowsAffected()), nil
}

// NearbyPlan reads what the search by passing time needs about a bib: its
// privacy request, and, without one, its splits and the event's timing
// points and positions.
func (s *Store) NearbyPlan(ctx context.Context, event, bib string) (photo.NearbyPlan, error) {
	var mode string
	err := s.pool.QueryRow(ctx, `SELECT mode FROM hidden_bibs WHERE event_id = $1 AND bib = $2`, event, bib).Scan(&mode)
	switch {
	case err == nil:
		return photo.NearbyPlan{Hidden: true}, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return photo.NearbyPlan{}, translate(err, "hidden bib", bib)
	}
	rows, err := s.pool.Query(ctx, `SELECT bib, point_id, passed_at FROM runner_splits WHERE event_id = $1 AND bib = $2`, event, bib)
	if err != nil {
		return photo.NearbyPlan{}, translate(err, "splits", bib)
	}
	var p photo.NearbyPlan
	if p.Splits, err = pgx.CollectRows(rows, pgx.RowToStructByPos[photo.Split]); err != nil || len(p.Splits) == 0 {
		return p, translate(err, "splits", bib)
	}
	if p.Points, err = s.points(ctx, event); err != nil {
		return p, err
	}
	p.Positions, err = s.positions(ctx, event)
	return p, err
}
