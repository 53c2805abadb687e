package photoapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/pacerhq/pacer/modules/photo"
)

// The baseline of the pipeline's ingest (ingest_cost_bench_test.go): the
// record checked by hand as the API documents it, the same Postgres round
// trips as Pacer's (the event, photographers, runners and privacy requests
// in one batch; after the writes, the photographer's profile version and
// the privacy requests again) and the same DynamoDB calls
// (TestBareIngestsAsPacerDoes). It does not settle the races those second
// reads look for (a rename or a privacy request that came while the photos
// were written, which Pacer settles with more calls): it answers 503
// then. No benchmark meets one.

// bareRecord is a processed-photo record as the pipeline posts it.
type bareRecord struct {
	ULID             string `json:"ulid"`
	OriginalFilename string `json:"originalFilename"`
	RawKey           string `json:"rawKey"`
	ProcessedKey     string `json:"processedKey"`
	S3URI            string `json:"s3Uri"`
	Dimensions       struct {
		Width  int `json:"width"`
		Height int `json:"height"`
	} `json:"dimensions"`
	Format         string     `json:"format"`
	Size           int64      `json:"size"`
	Bibs           []string   `json:"bibs"`
	FaceIDs        []string   `json:"faceIds"`
	PhotographerID string     `json:"photographerId"`
	CreatedAt      *time.Time `json:"createdAt"`
}

// bareText reports whether s is a required text of at most max
// characters: not blank, UTF-8, no control characters.
func bareText(s string, max int) bool {
	return strings.TrimSpace(s) != "" && utf8.ValidString(s) && utf8.RuneCountInString(s) <= max && strings.IndexFunc(s, unicode.IsControl) < 0
}

// check validates r as the API documents it and returns it as a photo of
// org's event (bibs once each, createdAt the ULID's time, a ULID minted
// if absent), without its photographer's profile.
func (r bareRecord) check(org, event string, now time.Time) (barePhoto, bool) {
	if r.ULID == "" {
		at := now
		if r.CreatedAt != nil {
			at = *r.CreatedAt
		}
		r.ULID = photo.NewULID(at)
	}
	d := r.Dimensions
	ok := photo.ValidULID(r.ULID) && bareText(r.OriginalFilename, photo.MaxFilenameLen) && bareText(r.RawKey, photo.MaxKeyLen) &&
		bareText(r.ProcessedKey, photo.MaxKeyLen) && bareText(r.S3URI, photo.MaxS3URILen) && strings.HasPrefix(r.S3URI, "s3://") &&
		bareText(r.Format, photo.MaxFormatLen) && d.Width >= 1 && d.Width <= 100000 && d.Height >= 1 && d.Height <= 100000 &&
		r.Size >= 0 && r.Size <= photo.MaxSize && r.Bibs != nil && len(r.Bibs) <= photo.MaxBibs && r.FaceIDs != nil && len(r.FaceIDs) <= photo.MaxFaces &&
		(r.PhotographerID == "" || photo.ValidID(r.PhotographerID))
	bibs := make([]string, 0, len(r.Bibs))
	for _, b := range r.Bibs {
		ok = ok && photo.ValidBib(b)
		if !slices.Contains(bibs, b) {
			bibs = append(bibs, b)
		}
	}
	for _, f := range r.FaceIDs {
		ok = ok && bareText(f, photo.MaxFaceIDLen)
	}
	if !ok {
		return barePhoto{}, false
	}
	id, _ := ulid.ParseStrict(r.ULID)
	at := ulid.Time(id.Time()).UTC()
	if at.Year() < 2000 || at.After(now.Add(photo.MaxClockSkew)) || (r.CreatedAt != nil && !r.CreatedAt.UTC().Truncate(time.Millisecond).Equal(at)) {
		return barePhoto{}, false
	}
	return barePhoto{ULID: r.ULID, OrgID: org, EventID: event, OriginalFilename: r.OriginalFilename, RawKey: r.RawKey, ProcessedKey: r.ProcessedKey,
		S3URI: r.S3URI, Dimensions: map[string]int{"width": d.Width, "height": d.Height}, Format: r.Format, Size: r.Size,
		Bibs: bibs, BibCount: len(bibs), FaceIDs: r.FaceIDs, FaceCount: len(r.FaceIDs), PhotographerID: r.PhotographerID,
		CreatedAt: at, UpdatedAt: at}, true
}

// bareResult is one photo's outcome, as Pacer answers it.
type bareResult struct {
	Index          int        `json:"index"`
	ULID           string     `json:"ulid,omitempty"`
	Status         string     `json:"status"`
	Error          string     `json:"error,omitempty"`
	UnmatchedBibs  []string   `json:"unmatchedBibs,omitempty"`
	SuppressedBibs []string   `json:"suppressedBibs,omitempty"`
	Photo          *barePhoto `json:"photo,omitempty"`
}

// bareIngest is one request's photos, checked against the truth: each
// photo with the bibs it keeps, and the result being made.
type bareIngest struct {
	org, event string
	photos     []barePhoto
	hidden     [][]string // bibs struck at a runner's request
	results    []bareResult
	versions   map[string]int64 // the photographers' profile versions copied
}

// ingestOne answers POST /events/{eventId}/photos.
func (b *barePhotoAPI) ingestOne(w http.ResponseWriter, r *http.Request) {
	var rec bareRecord
	in, ok := b.prepare(w, r, 1<<20, &rec, func() []bareRecord { return []bareRecord{rec} })
	if !ok {
		return
	}
	if in.results[0].Status == "" {
		in.results[0] = b.create(r.Context(), in, 0)
	}
	if !b.settle(w, r.Context(), in) {
		return
	}
	if in.results[0].Status == "failed" { // Pacer's single write fails the request
		fail(w, http.StatusServiceUnavailable)
		return
	}
	status := http.StatusCreated
	if in.results[0].Status != "created" {
		status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(in.results[0])
}

// ingestBatch answers POST /events/{eventId}/photos/batch.
func (b *barePhotoAPI) ingestBatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Photos []bareRecord `json:"photos"`
	}
	in, ok := b.prepare(w, r, 2<<20, &body, func() []bareRecord { return body.Photos })
	if !ok {
		return
	}
	b.createBatch(r.Context(), in)
	if !b.settle(w, r.Context(), in) {
		return
	}
	out := struct {
		Created    int          `json:"created"`
		Exists     int          `json:"exists"`
		Failed     int          `json:"failed"`
		Suppressed int          `json:"suppressed"`
		Results    []bareResult `json:"results"`
	}{Results: in.results}
	for _, res := range in.results {
		switch res.Status {
		case "created":
			out.Created++
		case "exists":
			out.Exists++
		case "suppressed":
			out.Suppressed++
		default:
			out.Failed++
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// prepare reads the caller, decodes the body (at most limit bytes) into
// body, checks the records recs returns (1 to photo.MaxBatch, ULIDs
// distinct) and reads the truth. It answers a refusal itself.
func (b *barePhotoAPI) prepare(w http.ResponseWriter, r *http.Request, limit int64, body any, recs func() []bareRecord) (*bareIngest, bool) {
	org, ok := b.organizer(w, r)
	if !ok {
		return nil, false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(body); err != nil {
		fail(w, http.StatusBadRequest)
		return nil, false
	}
	in := &bareIngest{org: org, event: r.PathValue("eventId"), versions: map[string]int64{}}
	rs := recs()
	ok = photo.ValidID(in.event) && len(rs) >= 1 && len(rs) <= photo.MaxBatch
	var phIDs, bibs []string
	now := time.Now()
	for _, rec := range rs {
		p, good := rec.check(org, in.event, now)
		ok = ok && good && !slices.ContainsFunc(in.photos, func(q barePhoto) bool { return q.ULID == p.ULID })
		if p.PhotographerID != "" && !slices.Contains(phIDs, p.PhotographerID) {
			phIDs = append(phIDs, p.PhotographerID)
		}
		for _, bib := range p.Bibs {
			if !slices.Contains(bibs, bib) {
				bibs = append(bibs, bib)
			}
		}
		in.photos = append(in.photos, p)
	}
	if !ok {
		fail(w, http.StatusUnprocessableEntity)
		return nil, false
	}
	t, err := b.truth(r.Context(), org, in.event, phIDs, bibs)
	if errors.Is(err, pgx.ErrNoRows) {
		fail(w, http.StatusNotFound)
		return nil, false
	}
	if err != nil {
		fail(w, http.StatusServiceUnavailable)
		return nil, false
	}
	return in, in.split(w, t)
}

// bareTruth is what the records are checked against.
type bareTruth struct {
	photographers map[string]photo.Photographer
	assigned      map[string]bool
	runners       map[string]bool
	hidden        map[string]string
}

// truth reads the event, the photographers named and whether they are
// assigned to it, the runners and the privacy requests of the bibs named:
// one round trip, the queries Pacer sends.
func (b *barePhotoAPI) truth(ctx context.Context, org, event string, phIDs, bibs []string) (bareTruth, error) {
	t := bareTruth{photographers: map[string]photo.Photographer{}, assigned: map[string]bool{}, runners: map[string]bool{}, hidden: map[string]string{}}
	if phIDs == nil {
		phIDs = []string{}
	}
	if bibs == nil {
		bibs = []string{}
	}
	batch := &pgx.Batch{}
	batch.Queue(eventQuery, org, event).QueryRow(scanEventRow)
	batch.Queue(`SELECT p.photographer_id, p.organizer_id, p.handle, p.display_name, p.profile_version, p.created_at, p.updated_at,
	                EXISTS (SELECT 1 FROM event_photographers ep WHERE ep.event_id = $2 AND ep.photographer_id = p.photographer_id)
	         FROM photographers p WHERE p.organizer_id = $1 AND p.photographer_id = ANY($3)`, org, event, phIDs).Query(func(rows pgx.Rows) error {
		var p photo.Photographer
		var assigned bool
		_, err := pgx.ForEachRow(rows, []any{&p.ID, &p.OrganizerID, &p.Handle, &p.DisplayName, &p.Version, &p.CreatedAt, &p.UpdatedAt, &assigned}, func() error {
			t.photographers[p.ID], t.assigned[p.ID] = p, assigned
			return nil
		})
		return err
	})
	batch.Queue(`SELECT event_id, bib, name FROM event_runners WHERE event_id = $1 AND bib = ANY($2)`, event, bibs).Query(func(rows pgx.Rows) error {
		var ev, bib, name string
		_, err := pgx.ForEachRow(rows, []any{&ev, &bib, &name}, func() error { t.runners[bib] = true; return nil })
		return err
	})
	batch.Queue(`SELECT bib, mode FROM hidden_bibs WHERE event_id = $1 AND bib = ANY($2)`, event, bibs).Query(func(rows pgx.Rows) error {
		var bib, mode string
		_, err := pgx.ForEachRow(rows, []any{&bib, &mode}, func() error { t.hidden[bib] = mode; return nil })
		return err
	})
	return t, b.pool.SendBatch(ctx, batch).Close()
}

// split checks each photo's photographer against the truth (422 if not
// one of the organizer's, assigned to the event), copies their profile,
// and splits its bibs: one under a delete request suppresses the photo,
// one under a hide request is struck, and one no runner wears is
// reported unmatched.
func (in *bareIngest) split(w http.ResponseWriter, t bareTruth) bool {
	in.results = make([]bareResult, len(in.photos))
	in.hidden = make([][]string, len(in.photos))
	for i := range in.photos {
		p := &in.photos[i]
		res := &in.results[i]
		res.Index, res.ULID = i, p.ULID
		if id := p.PhotographerID; id != "" {
			ph, ok := t.photographers[id]
			if !ok || !t.assigned[id] {
				fail(w, http.StatusUnprocessableEntity)
				return false
			}
			p.PhotographerHandle, p.PhotographerDisplayName = ph.Handle, ph.DisplayName
			in.versions[id] = ph.Version
		}
		kept := make([]string, 0, len(p.Bibs))
		deleted := false
		for _, bib := range p.Bibs {
			switch t.hidden[bib] {
			case photo.DeleteMode:
				res.SuppressedBibs, deleted = append(res.SuppressedBibs, bib), true
			case photo.HideMode:
				res.SuppressedBibs, in.hidden[i] = append(res.SuppressedBibs, bib), append(in.hidden[i], bib)
			default:
				kept = append(kept, bib)
				if !t.runners[bib] {
					res.UnmatchedBibs = append(res.UnmatchedBibs, bib)
				}
			}
		}
		p.Bibs, p.BibCount = kept, len(kept)
		if deleted {
			res.Status, res.UnmatchedBibs = "suppressed", nil
		}
	}
	return true
}
