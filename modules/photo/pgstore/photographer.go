package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

const photographerCols = `photographer_id, organizer_id, handle, display_name, profile_version, created_at, updated_at`

func scanPhotographer(r pgx.Row) (photo.Photographer, error) {
	var p photo.Photographer
	err := r.Scan(&p.ID, &p.OrganizerID, &p.Handle, &p.DisplayName, &p.Version, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// CreatePhotographer inserts a photographer of p.OrganizerID.
func (s *Store) CreatePhotographer(ctx context.Context, p photo.Photographer) (photo.Photographer, error) {
	out, err := scanPhotographer(s.pool.QueryRow(ctx,
		`INSERT INTO photographers (photographer_id, organizer_id, handle, display_name)
		 VALUES ($1, $2, $3, $4) RETURNING `+photographerCols,
		p.ID, p.OrganizerID, p.Handle, p.DisplayName))
	return out, translate(err, "photographer", p.ID)
}

// UpdatePhotographer changes a photographer's profile, bumps its version and
// resets its sync checkpoint to the new version, in one transaction.
func (s *Store) UpdatePhotographer(ctx context.Context, org, id string, p photo.PhotographerPatch) (photo.Photographer, error) {
	var out photo.Photographer
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		out, err = scanPhotographer(tx.QueryRow(ctx,
			`UPDATE photographers SET handle = COALESCE($3, handle), display_name = COALESCE($4, display_name),
			        profile_version = profile_version + 1, updated_at = now()
			 WHERE organizer_id = $1 AND photographer_id = $2 RETURNING `+photographerCols,
			org, id, p.Handle, p.DisplayName))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx,
			`INSERT INTO photographer_syncs (photographer_id, version) VALUES ($1, $2)
			 ON CONFLICT (photographer_id) DO UPDATE SET version = EXCLUDED.version, cursor = '',
			     scanned = 0, updated = 0, done = false, started_at = now(), updated_at = now()`,
			id, out.Version)
		return err
	})
	return out, translate(err, "photographer", id)
}

// Photographer reads a photographer of org.
func (s *Store) Photographer(ctx context.Context, org, id string) (photo.Photographer, error) {
	p, err := scanPhotographer(s.pool.QueryRow(ctx,
		`SELECT `+photographerCols+` FROM photographers WHERE organizer_id = $1 AND photographer_id = $2`, org, id))
	return p, translate(err, "photographer", id)
}

// ListPhotographers lists org's photographers by id.
func (s *Store) ListPhotographers(ctx context.Context, org string) ([]photo.Photographer, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+photographerCols+` FROM photographers WHERE organizer_id = $1 ORDER BY photographer_id`, org)
	if err != nil {
		return nil, translate(err, "photographers", org)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (photo.Photographer, error) { return scanPhotographer(r) })
	return out, translate(err, "photographers", org)
}

// PhotographerVersions returns the photographers' current profile versions.
func (s *Store) PhotographerVersions(ctx context.Context, ids []string) (map[string]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT photographer_id, profile_version FROM photographers WHERE photographer_id = ANY($1)`, ids)
	if err != nil {
		return nil, translate(err, "photographers", "")
	}
	type version struct {
		ID      string
		Version int64
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[version])
	if err != nil {
		return nil, translate(err, "photographers", "")
	}
	out := make(map[string]int64, len(list))
	for _, v := range list {
		out[v.ID] = v.Version
	}
	return out, nil
}
