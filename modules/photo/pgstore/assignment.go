package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

// Assign assigns a photographer to an event, both of org (the composite
// foreign keys refuse anything else). Assigning twice is not an error.
func (s *Store) Assign(ctx context.Context, org, event, photographer string) error {
	_, err := s.pool.Exec(ctx,
		`INSERT INTO event_photographers (organizer_id, event_id, photographer_id) VALUES ($1, $2, $3)
		 ON CONFLICT (event_id, photographer_id) DO NOTHING`, org, event, photographer)
	return translate(err, "assignment", event+"/"+photographer)
}

// Unassign removes an assignment.
func (s *Store) Unassign(ctx context.Context, org, event, photographer string) error {
	tag, err := s.pool.Exec(ctx,
		`DELETE FROM event_photographers WHERE organizer_id = $1 AND event_id = $2 AND photographer_id = $3`,
		org, event, photographer)
	if err != nil {
		return translate(err, "assignment", event+"/"+photographer)
	}
	if tag.RowsAffected() == 0 {
		return photo.NotFound("assignment", event+"/"+photographer)
	}
	return nil
}

// Assigned lists the photographers assigned to an event of org.
func (s *Store) Assigned(ctx context.Context, org, event string) ([]photo.Photographer, error) {
	if _, err := s.Event(ctx, org, event); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx,
		`SELECT p.photographer_id, p.organizer_id, p.handle, p.display_name, p.profile_version, p.created_at, p.updated_at
		 FROM event_photographers ep JOIN photographers p USING (photographer_id)
		 WHERE ep.organizer_id = $1 AND ep.event_id = $2 ORDER BY p.photographer_id`, org, event)
	if err != nil {
		return nil, translate(err, "assignments", event)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (photo.Photographer, error) { return scanPhotographer(r) })
	return out, translate(err, "assignments", event)
}

// PhotographerEvents lists the events of org a photographer is assigned
// to, by id.
func (s *Store) PhotographerEvents(ctx context.Context, org, photographer string) ([]string, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT event_id FROM event_photographers WHERE organizer_id = $1 AND photographer_id = $2 ORDER BY event_id`,
		org, photographer)
	if err != nil {
		return nil, translate(err, "assignments", photographer)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err, "assignments", photographer)
}
