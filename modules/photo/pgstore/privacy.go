package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

// HiddenBibs returns the privacy requests among bibs in an event.
func (s *Store) HiddenBibs(ctx context.Context, event string, bibs []string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT bib, mode FROM hidden_bibs WHERE event_id = $1 AND bib = ANY($2)`, event, bibs)
	if err != nil {
		return nil, translate(err, "hidden bibs", event)
	}
	out := map[string]string{}
	var bib, mode string
	_, err = pgx.ForEachRow(rows, []any{&bib, &mode}, func() error {
		out[bib] = mode
		return nil
	})
	if err != nil {
		return nil, translate(err, "hidden bibs", event)
	}
	return out, nil
}

// HideBib records a privacy request; "delete" outranks "hide".
func (s *Store) HideBib(ctx context.Context, r photo.PrivacyRequest) (string, error) {
	var stored string
	err := s.pool.QueryRow(ctx,
		`INSERT INTO hidden_bibs (event_id, bib, mode)
		 SELECT $2, $3, $4 WHERE EXISTS (SELECT 1 FROM events WHERE organizer_id = $1 AND event_id = $2)
		 ON CONFLICT (event_id, bib) DO UPDATE
		 SET mode = CASE WHEN hidden_bibs.mode = 'delete' THEN 'delete' ELSE EXCLUDED.mode END, requested_at = now()
		 RETURNING mode`,
		r.Org, r.Event, r.Bib, r.Mode).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", photo.NotFound("event", r.Event)
	}
	if err != nil {
		return "", translate(err, "hidden bib", r.Bib)
	}
	return stored, nil
}
