// Package pgstore is photo's Postgres truth: organizers, events,
// photographers, event assignments, runners, bib privacy requests, the
// photographer-sync checkpoints and race timing (timing points,
// photographers' positions and camera clocks, runners' splits), through a pgx v5 pool. The schema is in
// the repository's migrations package.
//
// Every query that reads or writes an organizer's data names the organizer
// in its WHERE clause, so an id of another organizer is indistinguishable
// from a missing one (photo.ErrNotFound). Postgres errors become the photo
// package's: unique violations ErrConflict, foreign-key violations
// ErrNotFound, check violations ErrInvalid.
package pgstore

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerhq/pacer/modules/photo"
)

// Store implements photo's Postgres ports.
type Store struct {
	pool *pgxpool.Pool
}

var (
	_ photo.OrganizerStore     = (*Store)(nil)
	_ photo.EventReader        = (*Store)(nil)
	_ photo.EventStore         = (*Store)(nil)
	_ photo.PhotographerReader = (*Store)(nil)
	_ photo.ProfileReader      = (*Store)(nil)
	_ photo.PhotographerStore  = (*Store)(nil)
	_ photo.AssignmentStore    = (*Store)(nil)
	_ photo.RunnerStore        = (*Store)(nil)
	_ photo.SearchTruth        = (*Store)(nil)
	_ photo.IngestSource       = (*Store)(nil)
	_ photo.PrivacyStore       = (*Store)(nil)
	_ photo.SyncStore          = (*Store)(nil)
	_ photo.TimingStore        = (*Store)(nil)
	_ photo.NearbyTruth        = (*Store)(nil)
	_ photo.RunnerNames        = (*Store)(nil)
)

// New returns a Store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// translate maps pgx and Postgres errors to the domain's; what names the
// object for not-found errors.
func translate(err error, what, id string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return photo.NotFound(what, id)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w: %s %q already exists", photo.ErrConflict, what, id)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w: %s %q refers to an organizer, event or photographer that does not exist", photo.ErrNotFound, what, id)
		case "23514", "22001", "22007", "22008", "22021", "22P05": // check, too long, bad date, bad encoding
			// The domain validates first; this is the backstop. The
			// constraint's name and message stay out of the answer.
			return photo.Invalid(what, "is not in an accepted format", nil)
		}
	}
	return fmt.Errorf("pgstore: %s %q: %w", what, id, err)
}
