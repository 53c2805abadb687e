package photo

import (
	"context"
	"fmt"
	"slices"
)

// IngestResult is the outcome of ingesting one record.
type IngestResult struct {
	WriteResult
	// UnmatchedBibs are bibs not among the event's runners. They are
	// indexed and searchable like the others (the policy for unknown bibs);
	// this flags them for follow-up.
	UnmatchedBibs []string
	// SuppressedBibs were dropped because a runner asked for the bib to be
	// hidden or deleted in this event.
	SuppressedBibs []string
}

// Ingest validates one processed-photo record and writes it as one PHOTO
// and one BIB_INDEX per bib, atomically and idempotently by ulid. Invalid
// input (including an unknown or unassigned photographer) is a
// *ValidationError and writes nothing; an event that is not org's is
// ErrNotFound.
func (s *Service) Ingest(ctx context.Context, org, event string, r Record) (IngestResult, error) {
	batch, err := s.prepare(ctx, org, event, []Record{r}, "")
	if err != nil {
		return IngestResult{}, err
	}
	res, err := s.index.Create(ctx, batch.photos[0])
	if err != nil {
		return IngestResult{}, err
	}
	out := batch.results([]WriteResult{res})
	s.refreshPhotographers(ctx, batch, out)
	if err := s.settlePrivacy(ctx, org, event, out); err != nil {
		return IngestResult{}, err
	}
	return out[0], nil
}

// IngestBatch ingests up to MaxBatch records of one event. Validation is
// all or nothing: if any record is invalid, the *ValidationError lists every
// problem (fields prefixed "photos[i].") and nothing is written. Otherwise
// the photos are written with batch writes and each record gets its own
// result, in order; a Failed one can be re-posted safely.
func (s *Service) IngestBatch(ctx context.Context, org, event string, rs []Record) ([]IngestResult, error) {
	if len(rs) == 0 {
		return nil, Invalid("photos", "is empty", nil)
	}
	if len(rs) > MaxBatch {
		return nil, Invalid("photos", fmt.Sprintf("holds more than %d photos", MaxBatch), len(rs))
	}
	batch, err := s.prepare(ctx, org, event, rs, "photos[%d].")
	if err != nil {
		return nil, err
	}
	res, err := s.index.CreateBatch(ctx, org, batch.photos)
	if err != nil {
		return nil, err
	}
	out := batch.results(res)
	s.refreshPhotographers(ctx, batch, out)
	if err := s.settlePrivacy(ctx, org, event, out); err != nil {
		return nil, err
	}
	return out, nil
}

// settlePrivacy closes the race between ingest and a runner's privacy
// request. RemoveBib records the request in Postgres before it walks the
// photos; prepare read the requests before the photos were written. So a
// photo written while a request ran may have been missed by both: after the
// writes, ingest reads the requests again for the bibs of the photos it
// wrote (or found) and strikes those bibs from them, exactly as if prepare
// had seen the request, and reports them in SuppressedBibs. (In DeleteMode
// the request's own walk, or a repeated request, deletes such a photo.) An
// error here fails the ingest: its retry finds the photos and settles
// them.
func (s *Service) settlePrivacy(ctx context.Context, org, event string, out []IngestResult) error {
	var bibs []string
	for _, r := range out {
		if r.Photo != nil && (r.Status == Created || r.Status == Exists) {
			bibs = append(bibs, r.Photo.Bibs...)
		}
	}
	if len(bibs) == 0 {
		return nil
	}
	slices.Sort(bibs)
	hidden, err := s.truth.HiddenBibs(ctx, event, slices.Compact(bibs))
	if err != nil || len(hidden) == 0 {
		return err
	}
	now := s.now()
	for i, r := range out {
		if r.Photo == nil || (r.Status != Created && r.Status != Exists) {
			continue
		}
		var kept []string
		for _, bib := range r.Photo.Bibs {
			if !hidden[bib] {
				kept = append(kept, bib)
				continue
			}
			if _, err := s.index.StrikeBib(ctx, org, event, r.Photo.ULID, bib, now); err != nil {
				return fmt.Errorf("photo %s: apply the privacy request for bib %s: %w", r.Photo.ULID, bib, err)
			}
			out[i].SuppressedBibs = append(out[i].SuppressedBibs, bib)
		}
		if len(kept) != len(r.Photo.Bibs) {
			p := *r.Photo
			p.Bibs, p.BibCount = append([]string{}, kept...), len(kept)
			out[i].Photo = &p
		}
	}
	return nil
}

// prepared is a validated batch, ready to write.
type prepared struct {
	photos     []*Photo
	unmatched  [][]string
	suppressed [][]string
	// versions are the photographers' profile versions copied.
	versions map[string]int64
}

func (b *prepared) results(ws []WriteResult) []IngestResult {
	out := make([]IngestResult, len(ws))
	for i, w := range ws {
		out[i] = IngestResult{WriteResult: w, UnmatchedBibs: b.unmatched[i], SuppressedBibs: b.suppressed[i]}
	}
	return out
}

// prepare validates records (prefix is a format with one %d for the
// record's index, or "" for a single record) against the truth.
func (s *Service) prepare(ctx context.Context, org, event string, rs []Record, prefix string) (*prepared, error) {
	var ps problems
	checkID(&ps, "eventId", event)
	if err := ps.err(); err != nil {
		return nil, err
	}
	now := s.now()
	recs := make([]Record, len(rs))
	seen := make(map[string]int, len(rs))
	var phIDs, bibs []string
	pfx := func(i int) string {
		if prefix == "" {
			return ""
		}
		return fmt.Sprintf(prefix, i)
	}
	for i, r := range rs {
		recs[i] = r.validate(&ps, pfx(i), now)
		if j, dup := seen[recs[i].ULID]; dup {
			ps.add(pfx(i)+"ulid", fmt.Sprintf("repeats %sulid", pfx(j)), recs[i].ULID)
		}
		seen[recs[i].ULID] = i
		if id := recs[i].PhotographerID; id != "" && !slices.Contains(phIDs, id) {
			phIDs = append(phIDs, id)
		}
		for _, b := range recs[i].Bibs {
			if !slices.Contains(bibs, b) {
				bibs = append(bibs, b)
			}
		}
		if len(ps.list) > 100 {
			break
		}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	truth, err := s.truth.IngestTruth(ctx, org, event, phIDs, bibs)
	if err != nil {
		return nil, err
	}
	b := &prepared{
		photos:     make([]*Photo, len(recs)),
		unmatched:  make([][]string, len(recs)),
		suppressed: make([][]string, len(recs)),
		versions:   map[string]int64{},
	}
	for i, r := range recs {
		var ph *Photographer
		if id := r.PhotographerID; id != "" {
			p, ok := truth.Photographers[id]
			switch {
			case !ok:
				ps.add(pfx(i)+"photographerId", "no such photographer in this organization", id)
				continue
			case !truth.Assigned[id]:
				ps.add(pfx(i)+"photographerId", "photographer is not assigned to event "+event, id)
				continue
			}
			ph = &p
			b.versions[id] = p.Version
		}
		kept := make([]string, 0, len(r.Bibs))
		for _, bib := range r.Bibs {
			switch {
			case truth.Hidden[bib]:
				b.suppressed[i] = append(b.suppressed[i], bib)
			default:
				kept = append(kept, bib)
				if _, ok := truth.Runners[bib]; !ok {
					b.unmatched[i] = append(b.unmatched[i], bib)
				}
			}
		}
		r.Bibs = kept
		b.photos[i] = r.photo(org, event, ph)
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return b, nil
}

// refreshPhotographers closes the race between ingest and a profile change:
// if a photographer's profile changed after prepare read it, the sync walk
// may already have passed the photos just written, so settle updates them.
// Failures are logged; Reconcile repairs what is left.
func (s *Service) refreshPhotographers(ctx context.Context, b *prepared, out []IngestResult) {
	for id, v := range b.versions {
		var created []*Photo
		for i, p := range b.photos {
			if p.PhotographerID == id && out[i].Status == Created {
				created = append(created, out[i].Photo)
			}
		}
		if err := s.settle(ctx, b.photos[0].OrgID, Photographer{ID: id, Version: v}, created); err != nil {
			s.log.Warn("photo: refresh photographer on new photos", "photographer", id, "err", err)
		}
	}
}
