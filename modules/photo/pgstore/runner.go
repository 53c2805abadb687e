package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

// ImportRunners upserts runners of an event of org in one statement.
func (s *Store) ImportRunners(ctx context.Context, org, event string, rs []photo.Runner) (int, error) {
	bibs := make([]string, len(rs))
	names := make([]string, len(rs))
	for i, r := range rs {
		bibs[i], names[i] = r.Bib, r.Name
	}
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO event_runners (event_id, bib, name)
		 SELECT $2, t.bib, t.name FROM unnest($3::text[], $4::text[]) AS t(bib, name)
		 WHERE EXISTS (SELECT 1 FROM events WHERE organizer_id = $1 AND event_id = $2)
		 ON CONFLICT (event_id, bib) DO UPDATE SET name = EXCLUDED.name, updated_at = now()
		 WHERE event_runners.name <> EXCLUDED.name`,
		org, event, bibs, names)
	if err != nil {
		return 0, translate(err, "runners", event)
	}
	return int(tag.RowsAffected()), nil
}

// ListRunners lists runners of an event of org by bib, after the given bib.
func (s *Store) ListRunners(ctx context.Context, q photo.RunnerQuery) ([]photo.Runner, error) {
	if _, err := s.Event(ctx, q.Org, q.Event); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx,
		`SELECT event_id, bib, name FROM event_runners WHERE event_id = $1 AND bib > $2 ORDER BY bib LIMIT $3`,
		q.Event, q.After, q.Limit)
	if err != nil {
		return nil, translate(err, "runners", q.Event)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[photo.Runner])
	return out, translate(err, "runners", q.Event)
}

// Runners returns the given bibs' runners in an event.
func (s *Store) Runners(ctx context.Context, event string, bibs []string) (map[string]photo.Runner, error) {
	rows, err := s.pool.Query(ctx,
		`SELECT event_id, bib, name FROM event_runners WHERE event_id = $1 AND bib = ANY($2)`, event, bibs)
	if err != nil {
		return nil, translate(err, "runners", event)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[photo.Runner])
	if err != nil {
		return nil, translate(err, "runners", event)
	}
	out := make(map[string]photo.Runner, len(list))
	for _, r := range list {
		out[r.Bib] = r
	}
	return out, nil
}
