package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

// IngestTruth loads what ingest needs in one round trip (a pgx batch).
func (s *Store) IngestTruth(ctx context.Context, q photo.IngestQuery) (photo.IngestTruth, error) {
	t := photo.IngestTruth{
		Photographers: map[string]photo.Photographer{}, Assigned: map[string]bool{},
		Runners: map[string]photo.Runner{}, Hidden: map[string]string{},
	}
	photographers, bibs := q.Photographers, q.Bibs
	if photographers == nil {
		photographers = []string{}
	}
	if bibs == nil {
		bibs = []string{}
	}
	org, event := q.Org, q.Event
	b := &pgx.Batch{}
	b.Queue(`SELECT `+eventCols+` FROM events WHERE organizer_id = $1 AND event_id = $2`, org, event).
		QueryRow(func(r pgx.Row) error {
			var err error
			t.Event, err = scanEvent(r)
			return translate(err, "event", event)
		})
	b.Queue(`SELECT p.photographer_id, p.organizer_id, p.handle, p.display_name, p.profile_version, p.created_at, p.updated_at,
	                EXISTS (SELECT 1 FROM event_photographers ep WHERE ep.event_id = $2 AND ep.photographer_id = p.photographer_id)
	         FROM photographers p WHERE p.organizer_id = $1 AND p.photographer_id = ANY($3)`, org, event, photographers).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var p photo.Photographer
				var assigned bool
				if err := rows.Scan(&p.ID, &p.OrganizerID, &p.Handle, &p.DisplayName, &p.Version, &p.CreatedAt, &p.UpdatedAt, &assigned); err != nil {
					return err
				}
				t.Photographers[p.ID] = p
				t.Assigned[p.ID] = assigned
			}
			return rows.Err()
		})
	b.Queue(`SELECT event_id, bib, name FROM event_runners WHERE event_id = $1 AND bib = ANY($2)`, event, bibs).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var r photo.Runner
				if err := rows.Scan(&r.EventID, &r.Bib, &r.Name); err != nil {
					return err
				}
				t.Runners[r.Bib] = r
			}
			return rows.Err()
		})
	b.Queue(`SELECT bib, mode FROM hidden_bibs WHERE event_id = $1 AND bib = ANY($2)`, event, bibs).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var bib, mode string
				if err := rows.Scan(&bib, &mode); err != nil {
					return err
				}
				t.Hidden[bib] = mode
			}
			return rows.Err()
		})
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return photo.IngestTruth{}, err
	}
	return t, nil
}
