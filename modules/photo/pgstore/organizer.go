package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

// CreateOrganizer inserts an organizer.
func (s *Store) CreateOrganizer(ctx context.Context, o photo.Organizer) (photo.Organizer, error) {
	err := s.pool.QueryRow(ctx,
		`INSERT INTO organizers (organizer_id, name) VALUES ($1, $2) RETURNING created_at`,
		o.ID, o.Name).Scan(&o.CreatedAt)
	return o, translate(err, "organizer", o.ID)
}

// Organizer reads an organizer.
func (s *Store) Organizer(ctx context.Context, id string) (photo.Organizer, error) {
	o := photo.Organizer{ID: id}
	err := s.pool.QueryRow(ctx, `SELECT name, created_at FROM organizers WHERE organizer_id = $1`, id).Scan(&o.Name, &o.CreatedAt)
	return o, translate(err, "organizer", id)
}

// ListOrganizers lists organizers by id.
func (s *Store) ListOrganizers(ctx context.Context) ([]photo.Organizer, error) {
	rows, err := s.pool.Query(ctx, `SELECT organizer_id, name, created_at FROM organizers ORDER BY organizer_id`)
	if err != nil {
		return nil, translate(err, "organizers", "")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (photo.Organizer, error) {
		var o photo.Organizer
		return o, r.Scan(&o.ID, &o.Name, &o.CreatedAt)
	})
	return out, translate(err, "organizers", "")
}
