package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

const eventCols = `event_id, organizer_id, name, COALESCE(to_char(starts_on, 'YYYY-MM-DD'), ''), published, public_name_search, created_at`

func scanEvent(r pgx.Row) (photo.Event, error) {
	var e photo.Event
	err := r.Scan(&e.ID, &e.OrganizerID, &e.Name, &e.StartsOn, &e.Published, &e.PublicNameSearch, &e.CreatedAt)
	return e, err
}

// CreateEvent inserts an event of e.OrganizerID.
func (s *Store) CreateEvent(ctx context.Context, e photo.Event) (photo.Event, error) {
	out, err := scanEvent(s.pool.QueryRow(ctx,
		`INSERT INTO events (event_id, organizer_id, name, starts_on, published, public_name_search)
		 VALUES ($1, $2, $3, NULLIF($4, '')::date, $5, $6) RETURNING `+eventCols,
		e.ID, e.OrganizerID, e.Name, e.StartsOn, e.Published, e.PublicNameSearch))
	return out, translate(err, "event", e.ID)
}

// UpdateEvent renames, (un)publishes an event of org or turns its public
// name search on or off.
func (s *Store) UpdateEvent(ctx context.Context, org, id string, p photo.EventPatch) (photo.Event, error) {
	out, err := scanEvent(s.pool.QueryRow(ctx,
		`UPDATE events SET name = COALESCE($3, name), published = COALESCE($4, published),
		 public_name_search = COALESCE($5, public_name_search)
		 WHERE organizer_id = $1 AND event_id = $2 RETURNING `+eventCols,
		org, id, p.Name, p.Published, p.PublicNameSearch))
	return out, translate(err, "event", id)
}

// Event reads an event of org.
func (s *Store) Event(ctx context.Context, org, id string) (photo.Event, error) {
	e, err := scanEvent(s.pool.QueryRow(ctx,
		`SELECT `+eventCols+` FROM events WHERE organizer_id = $1 AND event_id = $2`, org, id))
	return e, translate(err, "event", id)
}

// PublishedEvent reads an event if it is published.
func (s *Store) PublishedEvent(ctx context.Context, id string) (photo.Event, error) {
	e, err := scanEvent(s.pool.QueryRow(ctx,
		`SELECT `+eventCols+` FROM events WHERE event_id = $1 AND published`, id))
	return e, translate(err, "event", id)
}

// ListEvents lists org's events by id.
func (s *Store) ListEvents(ctx context.Context, org string) ([]photo.Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+eventCols+` FROM events WHERE organizer_id = $1 ORDER BY event_id`, org)
	if err != nil {
		return nil, translate(err, "events", org)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (photo.Event, error) { return scanEvent(r) })
	return out, translate(err, "events", org)
}
