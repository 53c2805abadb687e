package photo

import (
	"context"
	"errors"
)

// SyncOptions tunes a sync walk.
type SyncOptions struct {
	// PageSize is how many photos are read per GSI2 page (default 100).
	PageSize int
	// MaxPages stops the walk after this many pages (0: walk to the end).
	// The checkpoint is saved after every page, so the next call resumes.
	MaxPages int
}

// SyncReport says what a sync walk did.
type SyncReport struct {
	PhotographerID string `json:"photographerId"`
	Version        int64  `json:"version" doc:"The profile version being copied."`
	// Scanned and Updated count the whole walk across resumptions.
	Scanned int64 `json:"scanned"`
	Updated int64 `json:"updated"`
	Pages   int   `json:"pages" doc:"Pages read by this call."`
	Done    bool  `json:"done" doc:"False if the walk stopped early; call sync again to resume."`
	// Superseded: a newer profile change restarted the walk elsewhere.
	Superseded bool `json:"superseded"`
}

// SyncPhotographer copies a photographer's current handle and display name
// onto their PHOTO items by walking GSI2. It is resumable (a checkpoint with
// the walk's cursor is saved in Postgres after every page, keyed by the
// profile version) and idempotent (a photo already up to date is not
// written; running it again after it finished does nothing).
func (dir *Directory) SyncPhotographer(ctx context.Context, org, id string, opt SyncOptions) (SyncReport, error) {
	if opt.PageSize <= 0 {
		opt.PageSize = 100
	}
	ph, err := dir.cfg.Photographers.Photographer(ctx, org, id)
	if err != nil {
		return SyncReport{}, err
	}
	st, err := dir.cfg.Checkpoints.SyncState(ctx, id)
	if err != nil {
		return SyncReport{}, err
	}
	rep := SyncReport{PhotographerID: id, Version: st.Version}
	if st.Version != ph.Version {
		// The checkpoint is for another version: a change is in flight
		// between our two reads. The newest writer resets it; report.
		rep.Superseded = true
		return rep, nil
	}
	restarted := false
	for !st.Done && (opt.MaxPages == 0 || rep.Pages < opt.MaxPages) {
		page, err := dir.cfg.Photos.ByPhotographer(ctx, PhotographerQuery{Org: org, Photographer: id}, PageRequest{Limit: opt.PageSize, Cursor: st.Cursor})
		if errors.Is(err, ErrCursor) && !restarted {
			// The cursor key changed since the checkpoint was written: the
			// walk is idempotent, so start it again.
			dir.cfg.Log.Warn("photo: sync checkpoint cursor rejected; restarting the walk", "photographer", id)
			st.Cursor, restarted = "", true
			continue
		}
		if err != nil {
			return rep, err
		}
		rep.Pages++
		var written []*Photo
		for _, p := range page.Photos {
			st.Scanned++
			if p.PhotographerHandle == ph.Handle && p.PhotographerDisplayName == ph.DisplayName {
				continue
			}
			ok, err := dir.cfg.Copies.SetPhotographer(ctx, p, ph, dir.cfg.Now())
			if err != nil {
				return rep, err
			}
			if ok {
				st.Updated++
				written = append(written, p)
			}
		}
		if err := settleCopies(ctx, dir.cfg.Photographers, dir.cfg.Copies, dir.cfg.Now, org, ph, written); err != nil {
			return rep, err
		}
		st.Cursor, st.Done = page.Cursor, page.Cursor == ""
		if err := dir.cfg.Checkpoints.SaveSyncState(ctx, st); err != nil {
			if errors.Is(err, ErrConflict) {
				rep.Superseded = true
				break
			}
			return rep, err
		}
	}
	rep.Scanned, rep.Updated, rep.Done = st.Scanned, st.Updated, st.Done
	return rep, nil
}

// Drift is one PHOTO whose photographer copy disagrees with Postgres.
type Drift struct {
	ULID           string `json:"ulid"`
	EventID        string `json:"eventId"`
	PhotographerID string `json:"photographerId"`
	Field          string `json:"field" doc:"photographerHandle or photographerDisplayName."`
	Have           string `json:"have"`
	Want           string `json:"want"`
}

// ReconcileReport says what a reconcile found and did.
type ReconcileReport struct {
	Photographers int     `json:"photographers"`
	Scanned       int     `json:"scanned"`
	Drifted       int     `json:"drifted" doc:"Photos whose photographer fields disagreed with the directory (the source of truth) and were repaired."`
	Repaired      int     `json:"repaired"`
	Drift         []Drift `json:"drift" doc:"The first 100 disagreements."`
}

// Reconcile compares every PHOTO of a photographer (or of every
// photographer of org, when id is "") with Postgres, reports each drifted
// copy and, if repair is set, rewrites it.
func (dir *Directory) Reconcile(ctx context.Context, org, id string, repair bool) (ReconcileReport, error) {
	var phs []Photographer
	if id != "" {
		ph, err := dir.cfg.Photographers.Photographer(ctx, org, id)
		if err != nil {
			return ReconcileReport{}, err
		}
		phs = []Photographer{ph}
	} else {
		var err error
		if phs, err = dir.cfg.Photographers.ListPhotographers(ctx, org); err != nil {
			return ReconcileReport{}, err
		}
	}
	rep := ReconcileReport{Drift: []Drift{}}
	for _, ph := range phs {
		rep.Photographers++
		r := PageRequest{Limit: MaxPageSize}
		for {
			page, err := dir.cfg.Photos.ByPhotographer(ctx, PhotographerQuery{Org: org, Photographer: ph.ID}, r)
			if err != nil {
				return rep, err
			}
			var repaired []*Photo
			for _, p := range page.Photos {
				rep.Scanned++
				drift := false
				for _, d := range []Drift{
					{Field: "photographerHandle", Have: p.PhotographerHandle, Want: ph.Handle},
					{Field: "photographerDisplayName", Have: p.PhotographerDisplayName, Want: ph.DisplayName},
				} {
					if d.Have == d.Want {
						continue
					}
					drift = true
					if len(rep.Drift) < 100 {
						d.ULID, d.EventID, d.PhotographerID = p.ULID, p.EventID, ph.ID
						rep.Drift = append(rep.Drift, d)
					}
				}
				if !drift {
					continue
				}
				rep.Drifted++
				if repair {
					ok, err := dir.cfg.Copies.SetPhotographer(ctx, p, ph, dir.cfg.Now())
					if err != nil {
						return rep, err
					}
					if ok {
						rep.Repaired++
						repaired = append(repaired, p)
					}
				}
			}
			if err := settleCopies(ctx, dir.cfg.Photographers, dir.cfg.Copies, dir.cfg.Now, org, ph, repaired); err != nil {
				return rep, err
			}
			if page.Cursor == "" {
				break
			}
			r.Cursor = page.Cursor
		}
	}
	return rep, nil
}
