package photo

import (
	"context"
	"errors"
	"fmt"
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
func (s *Service) SyncPhotographer(ctx context.Context, org, id string, opt SyncOptions) (SyncReport, error) {
	if opt.PageSize <= 0 {
		opt.PageSize = 100
	}
	ph, err := s.truth.Photographer(ctx, org, id)
	if err != nil {
		return SyncReport{}, err
	}
	st, err := s.truth.SyncState(ctx, id)
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
		page, err := s.index.ByPhotographer(ctx, org, id, nil, PageRequest{Limit: opt.PageSize, Cursor: st.Cursor})
		if errors.Is(err, ErrCursor) && !restarted {
			// The cursor key changed since the checkpoint was written: the
			// walk is idempotent, so start it again.
			s.log.Warn("photo: sync checkpoint cursor rejected; restarting the walk", "photographer", id)
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
			ok, err := s.index.SetPhotographer(ctx, p, ph, s.now())
			if err != nil {
				return rep, err
			}
			if ok {
				st.Updated++
				written = append(written, p)
			}
		}
		if err := s.settle(ctx, org, ph, written); err != nil {
			return rep, err
		}
		st.Cursor, st.Done = page.Cursor, page.Cursor == ""
		if err := s.truth.SaveSyncState(ctx, st); err != nil {
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
func (s *Service) Reconcile(ctx context.Context, org, id string, repair bool) (ReconcileReport, error) {
	var phs []Photographer
	if id != "" {
		ph, err := s.truth.Photographer(ctx, org, id)
		if err != nil {
			return ReconcileReport{}, err
		}
		phs = []Photographer{ph}
	} else {
		var err error
		if phs, err = s.truth.ListPhotographers(ctx, org); err != nil {
			return ReconcileReport{}, err
		}
	}
	rep := ReconcileReport{Drift: []Drift{}}
	for _, ph := range phs {
		rep.Photographers++
		r := PageRequest{Limit: MaxPageSize}
		for {
			page, err := s.index.ByPhotographer(ctx, org, ph.ID, nil, r)
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
					ok, err := s.index.SetPhotographer(ctx, p, ph, s.now())
					if err != nil {
						return rep, err
					}
					if ok {
						rep.Repaired++
						repaired = append(repaired, p)
					}
				}
			}
			if err := s.settle(ctx, org, ph, repaired); err != nil {
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

// maxSettleRounds bounds settle against a profile that never holds still.
const maxSettleRounds = 10

// settle makes sure that ps, whose copies were just written from ph, end
// with the photographer's current profile. A rename that commits while
// they are written starts its own walk, which may already have passed them;
// the older copy would then stay. So, once the writes are in, the profile
// version is read again, and while it differs from the one copied, the
// photos are written again with the newer profile. Any rename committed
// after the last check starts a walk that reads these photos afterwards.
// One Postgres read per call when nothing changed.
func (s *Service) settle(ctx context.Context, org string, ph Photographer, ps []*Photo) error {
	if len(ps) == 0 {
		return nil
	}
	for range maxSettleRounds {
		vs, err := s.truth.PhotographerVersions(ctx, []string{ph.ID})
		if err != nil {
			return err
		}
		if vs[ph.ID] == ph.Version {
			return nil
		}
		if ph, err = s.truth.Photographer(ctx, org, ph.ID); err != nil {
			return err
		}
		for _, p := range ps {
			if _, err := s.index.SetPhotographer(ctx, p, ph, s.now()); err != nil {
				return err
			}
			p.PhotographerHandle, p.PhotographerDisplayName = ph.Handle, ph.DisplayName
		}
	}
	return fmt.Errorf("%w: photographer %s's profile kept changing while their photos were updated", ErrConflict, ph.ID)
}
