package photo

import (
	"context"
	"fmt"
	"time"
)

// maxSettleRounds bounds settleCopies against a profile that never holds
// still.
const maxSettleRounds = 10

// settleCopies makes sure that ps, whose copies were just written from ph,
// end with the photographer's current profile (Ingest, for the photos it
// wrote; Directory's sync walk and Reconcile, for the photos they
// rewrote). A rename that commits while they are written starts its own
// walk, which may already have passed them; the older copy would then
// stay. So, once the writes are in, the profile version is read again from
// profiles, and while it differs from the one copied, the photos are
// written again through copies with the newer profile. Any rename
// committed after the last check starts a walk that reads these photos
// afterwards. One Postgres read per call when nothing changed.
func settleCopies(ctx context.Context, profiles ProfileReader, copies ProfileIndex, now func() time.Time, org string, ph Photographer, ps []*Photo) error {
	if len(ps) == 0 {
		return nil
	}
	for range maxSettleRounds {
		vs, err := profiles.PhotographerVersions(ctx, []string{ph.ID})
		if err != nil {
			return err
		}
		if vs[ph.ID] == ph.Version {
			return nil
		}
		if ph, err = profiles.Photographer(ctx, org, ph.ID); err != nil {
			return err
		}
		for _, p := range ps {
			if _, err := copies.SetPhotographer(ctx, p, ph, now()); err != nil {
				return err
			}
			p.PhotographerHandle, p.PhotographerDisplayName = ph.Handle, ph.DisplayName
		}
	}
	return fmt.Errorf("%w: photographer %s's profile kept changing while their photos were updated", ErrConflict, ph.ID)
}
