package pgstore

import (
	"context"
	"fmt"

	"github.com/pacerhq/pacer/modules/photo"
)

// SyncState returns a photographer's sync checkpoint, creating one at the
// current profile version (a walk that then finds nothing to change) if
// there is none.
func (s *Store) SyncState(ctx context.Context, photographer string) (photo.SyncState, error) {
	st := photo.SyncState{PhotographerID: photographer}
	err := s.pool.QueryRow(ctx,
		`WITH ins AS (
		   INSERT INTO photographer_syncs (photographer_id, version)
		   SELECT photographer_id, profile_version FROM photographers WHERE photographer_id = $1
		   ON CONFLICT (photographer_id) DO NOTHING
		   RETURNING version, cursor, scanned, updated, done)
		 SELECT version, cursor, scanned, updated, done FROM ins
		 UNION ALL
		 SELECT version, cursor, scanned, updated, done FROM photographer_syncs WHERE photographer_id = $1`,
		photographer).Scan(&st.Version, &st.Cursor, &st.Scanned, &st.Updated, &st.Done)
	return st, translate(err, "photographer", photographer)
}

// SaveSyncState stores a checkpoint if its version is still the current one.
func (s *Store) SaveSyncState(ctx context.Context, st photo.SyncState) error {
	tag, err := s.pool.Exec(ctx,
		`UPDATE photographer_syncs SET cursor = $3, scanned = $4, updated = $5, done = $6, updated_at = now()
		 WHERE photographer_id = $1 AND version = $2`,
		st.PhotographerID, st.Version, st.Cursor, st.Scanned, st.Updated, st.Done)
	if err != nil {
		return translate(err, "sync state", st.PhotographerID)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: photographer %s's profile changed again; a newer sync walk replaces this one", photo.ErrConflict, st.PhotographerID)
	}
	return nil
}
