package pgstore

import (
	"context"
	"errors"
	"fmt"

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

const eventCols = `event_id, organizer_id, name, COALESCE(to_char(starts_on, 'YYYY-MM-DD'), ''), published, created_at`

func scanEvent(r pgx.Row) (photo.Event, error) {
	var e photo.Event
	err := r.Scan(&e.ID, &e.OrganizerID, &e.Name, &e.StartsOn, &e.Published, &e.CreatedAt)
	return e, err
}

// CreateEvent inserts an event of e.OrganizerID.
func (s *Store) CreateEvent(ctx context.Context, e photo.Event) (photo.Event, error) {
	out, err := scanEvent(s.pool.QueryRow(ctx,
		`INSERT INTO events (event_id, organizer_id, name, starts_on, published)
		 VALUES ($1, $2, $3, NULLIF($4, '')::date, $5) RETURNING `+eventCols,
		e.ID, e.OrganizerID, e.Name, e.StartsOn, e.Published))
	return out, translate(err, "event", e.ID)
}

// UpdateEvent renames or (un)publishes an event of org.
func (s *Store) UpdateEvent(ctx context.Context, org, id string, p photo.EventPatch) (photo.Event, error) {
	out, err := scanEvent(s.pool.QueryRow(ctx,
		`UPDATE events SET name = COALESCE($3, name), published = COALESCE($4, published)
		 WHERE organizer_id = $1 AND event_id = $2 RETURNING `+eventCols,
		org, id, p.Name, p.Published))
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
func (s *Store) ListRunners(ctx context.Context, org, event, after string, limit int) ([]photo.Runner, error) {
	if _, err := s.Event(ctx, org, event); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx,
		`SELECT event_id, bib, name FROM event_runners WHERE event_id = $1 AND bib > $2 ORDER BY bib LIMIT $3`,
		event, after, limit)
	if err != nil {
		return nil, translate(err, "runners", event)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[photo.Runner])
	return out, translate(err, "runners", event)
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

// IngestTruth loads what ingest needs in one round trip (a pgx batch).
func (s *Store) IngestTruth(ctx context.Context, org, event string, photographers, bibs []string) (photo.IngestTruth, error) {
	t := photo.IngestTruth{
		Photographers: map[string]photo.Photographer{}, Assigned: map[string]bool{},
		Runners: map[string]photo.Runner{}, Hidden: map[string]string{},
	}
	if photographers == nil {
		photographers = []string{}
	}
	if bibs == nil {
		bibs = []string{}
	}
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

// HiddenBibs implements photo.Truth.
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
func (s *Store) HideBib(ctx context.Context, org, event, bib, mode string) (string, error) {
	var stored string
	err := s.pool.QueryRow(ctx,
		`INSERT INTO hidden_bibs (event_id, bib, mode)
		 SELECT $2, $3, $4 WHERE EXISTS (SELECT 1 FROM events WHERE organizer_id = $1 AND event_id = $2)
		 ON CONFLICT (event_id, bib) DO UPDATE
		 SET mode = CASE WHEN hidden_bibs.mode = 'delete' THEN 'delete' ELSE EXCLUDED.mode END, requested_at = now()
		 RETURNING mode`,
		org, event, bib, mode).Scan(&stored)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", photo.NotFound("event", event)
	}
	if err != nil {
		return "", translate(err, "hidden bib", bib)
	}
	return stored, nil
}

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
