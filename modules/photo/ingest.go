package photo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Ingest is the pipeline's role: it validates processed-photo records
// against the truth and writes them to the index, then settles the privacy
// requests and photographer renames that raced the writes. photo-api
// builds it (services/internal/photobackend) for its ingest routes. It is
// safe for concurrent use.
type Ingest struct {
	cfg IngestConfig
}

// IngestConfig configures an Ingest.
type IngestConfig struct {
	// Source is what records are validated against, and where the privacy
	// requests are read again after the writes (pgstore).
	Source IngestSource
	// Profiles reads photographers' current profiles, to settle a rename
	// that raced the writes (pgstore).
	Profiles ProfileReader
	// Index is where the photos are written and the privacy requests that
	// raced the writes are applied (dynamostore).
	Index IngestIndex
	// Copies rewrites a photographer's profile on the photos just written
	// when a rename raced them (dynamostore).
	Copies ProfileIndex
	// Now is the clock (default time.Now): a photo's time may be at most
	// MaxClockSkew after it; a record with neither ulid nor createdAt gets
	// a ulid minted at it; settled copies are stamped with it.
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
	// Observer, if set, hears every ingest call (for metrics).
	Observer Observer
}

func (c IngestConfig) withDefaults() IngestConfig {
	c.Now, c.Log = defaultNow(c.Now), defaultLog(c.Log)
	return c
}

// NewIngest returns an Ingest.
func NewIngest(cfg IngestConfig) *Ingest {
	return &Ingest{cfg: cfg.withDefaults()}
}

// IngestResult is the outcome of ingesting one record.
type IngestResult struct {
	WriteResult
	// UnmatchedBibs are bibs of the written photo that are not among the
	// event's runners. They are indexed and searchable like the others (the
	// policy for unknown bibs); this flags them for follow-up. Empty unless
	// the photo was written (Created) or may have been (Failed).
	UnmatchedBibs []string
	// SuppressedBibs were dropped because a runner asked for the bib to be
	// hidden or deleted in this event.
	SuppressedBibs []string
}

// Ingest validates one processed-photo record and writes it as one PHOTO
// and one BIB_INDEX per bib, atomically and idempotently by ulid. Invalid
// input (including an unknown or unassigned photographer) is a
// *ValidationError and writes nothing; an event that is not org's is
// ErrNotFound. A photo showing a bib whose runner asked for their photos to
// be deleted is not written (Suppressed).
func (ing *Ingest) Ingest(ctx context.Context, org, event string, r Record) (IngestResult, error) {
	out, err := ing.ingest(ctx, org, event, []Record{r}, "", func(ps []*Photo) ([]WriteResult, error) {
		res, err := ing.cfg.Index.Create(ctx, ps[0])
		return []WriteResult{res}, err
	})
	if err != nil {
		return IngestResult{}, err
	}
	return out[0], nil
}

// IngestBatch ingests up to MaxBatch records of one event. Validation is
// all or nothing: if any record is invalid, the *ValidationError lists every
// problem (fields prefixed "photos[i].") and nothing is written. Otherwise
// the photos are written with batch writes and each record gets its own
// result, in order; a Failed one can be re-posted safely.
func (ing *Ingest) IngestBatch(ctx context.Context, org, event string, rs []Record) ([]IngestResult, error) {
	if len(rs) == 0 {
		return nil, Invalid("photos", "is empty", nil)
	}
	if len(rs) > MaxBatch {
		return nil, Invalid("photos", fmt.Sprintf("holds more than %d photos", MaxBatch), len(rs))
	}
	return ing.ingest(ctx, org, event, rs, "photos[%d].", func(ps []*Photo) ([]WriteResult, error) {
		return ing.cfg.Index.CreateBatch(ctx, org, ps)
	})
}

// ingest validates rs, writes the photos that are not suppressed with
// write, and settles what happened meanwhile (photographer renames,
// privacy requests).
func (ing *Ingest) ingest(ctx context.Context, org, event string, rs []Record, prefix string, write func([]*Photo) ([]WriteResult, error)) (out []IngestResult, err error) {
	if ing.cfg.Observer != nil {
		defer func() { ing.cfg.Observer.Ingested(len(rs), stored(out)) }()
	}
	batch, err := ing.prepare(ctx, org, event, rs, prefix)
	if err != nil {
		return nil, err
	}
	ws := make([]WriteResult, len(rs))
	var todo []int
	var photos []*Photo
	for i, p := range batch.photos {
		if batch.deleted[i] {
			ws[i] = WriteResult{Status: Suppressed}
			continue
		}
		todo, photos = append(todo, i), append(photos, p)
	}
	if len(photos) > 0 {
		res, err := write(photos)
		if err != nil {
			// The photos may have been written all the same (an answer
			// lost): settle privacy requests on them before failing.
			for _, i := range todo {
				ws[i] = WriteResult{Status: Failed, Err: err}
			}
			if serr := ing.settlePrivacy(ctx, org, event, batch, batch.results(ws)); serr != nil {
				ing.cfg.Log.Warn("photo: settle privacy requests after a failed write", "err", serr)
			}
			return nil, err
		}
		for k, i := range todo {
			ws[i] = res[k]
		}
	}
	out = batch.results(ws)
	ing.refreshPhotographers(ctx, batch, out)
	if err := ing.settlePrivacy(ctx, org, event, batch, out); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Status != Created && out[i].Status != Failed {
			// Exists or Suppressed: nothing posted was written.
			out[i].UnmatchedBibs = nil
		}
	}
	return out, nil
}

// settlePrivacy closes the race between ingest and a runner's privacy
// request. RemoveBib records the request in Postgres before it walks the
// photos; prepare read the requests before the photos were written. So a
// photo written while a request ran may have been missed by both. After
// the writes, ingest reads the requests again (one Postgres query) and
// applies those prepare did not already apply, with the same guarded step
// as RemoveBib (IngestIndex.ApplyPrivacy: hide strikes the bib, delete
// deletes the photo only if it shows the bib or had it hidden):
//
//   - created: bibs it shows that now have a request, and bibs prepare hid
//     that are now under a delete request;
//   - exists: the stored photo's bibs with a request, and the posted ones
//     under a delete request;
//   - suppressed by prepare: whether a photo with the ulid is stored (an
//     earlier attempt whose settling failed) that shows the bib;
//   - failed (perhaps written): every posted bib with a request.
//
// With no request among the bibs it costs no DynamoDB call; records are
// settled in parallel. An error fails the ingest; its retry settles again.
func (ing *Ingest) settlePrivacy(ctx context.Context, org, event string, batch *prepared, out []IngestResult) error {
	var all []string
	for i, r := range out {
		all = append(all, batch.photos[i].Bibs...)
		all = append(all, batch.photos[i].HiddenBibs...)
		all = append(all, batch.suppressed[i]...)
		if r.Photo != nil {
			all = append(all, r.Photo.Bibs...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.Sort(all)
	modes, err := ing.cfg.Source.HiddenBibs(ctx, event, slices.Compact(all))
	if err != nil || len(modes) == 0 {
		return err
	}
	with := func(bibs []string, ok func(mode string) bool) []string {
		var out []string
		for _, b := range bibs {
			if m := modes[b]; m != "" && ok(m) {
				out = append(out, b)
			}
		}
		return out
	}
	anyMode := func(string) bool { return true }
	isDelete := func(m string) bool { return m == DeleteMode }
	todo := make([][]string, len(out))
	for i, r := range out {
		p := batch.photos[i]
		switch r.Status {
		case Created:
			todo[i] = union(with(p.Bibs, anyMode), with(p.HiddenBibs, isDelete))
		case Exists:
			todo[i] = union(with(r.Photo.Bibs, anyMode), with(slices.Concat(p.Bibs, p.HiddenBibs, batch.suppressed[i]), isDelete))
		case Suppressed:
			todo[i] = with(batch.suppressed[i], isDelete)
		case Failed:
			todo[i] = union(with(slices.Concat(p.Bibs, p.HiddenBibs, batch.suppressed[i]), anyMode), nil)
		}
	}
	now := ing.cfg.Now()
	errs := make([]error, len(out))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range out {
		if len(todo[i]) == 0 {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = ing.settleOne(ctx, org, event, batch.photos[i].ULID, todo[i], modes, now, &out[i])
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// settleOne applies the requests for bibs to one record's photo and
// corrects its result.
func (ing *Ingest) settleOne(ctx context.Context, org, event, ulid string, bibs []string, modes map[string]string, now time.Time, r *IngestResult) error {
	var after *Photo
	deleted := false
	for _, bib := range bibs {
		p, del, err := ing.cfg.Index.ApplyPrivacy(ctx, PrivacyRequest{Org: org, Event: event, Bib: bib, Mode: modes[bib]}, ulid, now)
		if err != nil {
			return fmt.Errorf("photo %s: apply the privacy request for bib %s: %w", ulid, bib, err)
		}
		after, deleted = p, deleted || del
	}
	r.SuppressedBibs = union(r.SuppressedBibs, bibs)
	r.UnmatchedBibs = slices.DeleteFunc(r.UnmatchedBibs, func(b string) bool { return slices.Contains(bibs, b) })
	switch {
	case after == nil && (deleted || r.Status != Failed):
		// Gone at a runner's request (or never written for it).
		r.WriteResult = WriteResult{Status: Suppressed}
	case after != nil && r.Status == Suppressed:
		// Not written, but a photo with this ulid is stored and does not
		// show the bib: report it as the existing photo.
		r.WriteResult = WriteResult{Status: Exists, Photo: after}
	case after != nil && r.Status != Failed:
		r.Photo = after
	}
	return nil
}

// union returns a sorted, duplicate-free union of a and b.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// prepared is a validated batch, ready to write.
type prepared struct {
	photos     []*Photo
	unmatched  [][]string
	suppressed [][]string
	// deleted marks photos not to write: they show a bib whose runner
	// asked for their photos to be deleted.
	deleted []bool
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

// validateRecords validates records, each under its prefix pfx(i), and
// adds a repeated ulid to ps; it stops after 100 problems. It returns the
// records as validated and the photographers and bibs they name, each
// once.
func validateRecords(ps *problems, rs []Record, pfx func(int) string, now time.Time) (recs []Record, phIDs, bibs []string) {
	recs = make([]Record, len(rs))
	seen := make(map[string]int, len(rs))
	for i, r := range rs {
		recs[i] = r.validate(ps, pfx(i), now)
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
	return recs, phIDs, bibs
}

// splitBibs splits record i's bibs by the truth: a bib whose runner asked
// for deletion marks the photo deleted, a hidden one is suppressed and
// returned in hidden, and any other is kept (and noted unmatched if no
// runner wears it).
func (b *prepared) splitBibs(i int, bibs []string, truth IngestTruth) (kept, hidden []string) {
	kept = make([]string, 0, len(bibs))
	for _, bib := range bibs {
		switch truth.Hidden[bib] {
		case DeleteMode:
			b.suppressed[i] = append(b.suppressed[i], bib)
			b.deleted[i] = true
		case HideMode:
			b.suppressed[i] = append(b.suppressed[i], bib)
			hidden = append(hidden, bib)
		default:
			kept = append(kept, bib)
			if _, ok := truth.Runners[bib]; !ok {
				b.unmatched[i] = append(b.unmatched[i], bib)
			}
		}
	}
	return kept, hidden
}

// prepare validates records (prefix is a format with one %d for the
// record's index, or "" for a single record) against the truth.
func (ing *Ingest) prepare(ctx context.Context, org, event string, rs []Record, prefix string) (*prepared, error) {
	var ps problems
	checkID(&ps, "eventId", event)
	if err := ps.err(); err != nil {
		return nil, err
	}
	pfx := func(i int) string {
		if prefix == "" {
			return ""
		}
		return fmt.Sprintf(prefix, i)
	}
	recs, phIDs, bibs := validateRecords(&ps, rs, pfx, ing.cfg.Now())
	if err := ps.err(); err != nil {
		return nil, err
	}
	truth, err := ing.cfg.Source.IngestTruth(ctx, IngestQuery{Org: org, Event: event, Photographers: phIDs, Bibs: bibs})
	if err != nil {
		return nil, err
	}
	b := &prepared{
		photos:     make([]*Photo, len(recs)),
		unmatched:  make([][]string, len(recs)),
		suppressed: make([][]string, len(recs)),
		deleted:    make([]bool, len(recs)),
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
		kept, hiddenHere := b.splitBibs(i, r.Bibs, truth)
		r.Bibs = kept
		b.photos[i] = r.photo(org, event, ph)
		b.photos[i].HiddenBibs = hiddenHere
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return b, nil
}

// refreshPhotographers closes the race between ingest and a profile change:
// if a photographer's profile changed after prepare read it, the sync walk
// may already have passed the photos just written, so settleCopies updates
// them.
// Failures are logged; Reconcile repairs what is left.
func (ing *Ingest) refreshPhotographers(ctx context.Context, b *prepared, out []IngestResult) {
	for id, v := range b.versions {
		var created []*Photo
		for i, p := range b.photos {
			if p.PhotographerID == id && out[i].Status == Created {
				created = append(created, out[i].Photo)
			}
		}
		if err := settleCopies(ctx, ing.cfg.Profiles, ing.cfg.Copies, ing.cfg.Now, b.photos[0].OrgID, Photographer{ID: id, Version: v}, created); err != nil {
			ing.cfg.Log.Warn("photo: refresh photographer on new photos", "photographer", id, "err", err)
		}
	}
}

// stored counts the results that are stored.
func stored(rs []IngestResult) int {
	n := 0
	for _, r := range rs {
		if r.Status == Created || r.Status == Exists {
			n++
		}
	}
	return n
}
