package photo

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Photo is one processed race photo, as stored in the PHOTO item.
type Photo struct {
	ULID    string `json:"ulid" doc:"The photo's ULID (time-ordered)."`
	OrgID   string `json:"orgId"`
	EventID string `json:"eventId"`

	OriginalFilename string     `json:"originalFilename"`
	RawKey           string     `json:"rawKey" doc:"S3 key of the original upload."`
	ProcessedKey     string     `json:"processedKey" doc:"S3 key of the processed image to render."`
	S3URI            string     `json:"s3Uri" doc:"s3:// URI of the processed image."`
	Dimensions       Dimensions `json:"dimensions"`
	Format           string     `json:"format" doc:"Image format, e.g. jpeg."`
	Size             int64      `json:"size" doc:"File size in bytes."`

	Bibs      []string `json:"bibs" doc:"Bib numbers detected on the photo."`
	BibCount  int      `json:"bibCount"`
	FaceIDs   []string `json:"faceIds" doc:"Rekognition face ids."`
	FaceCount int      `json:"faceCount"`

	// Photographer fields are copied from Postgres at ingest and kept in
	// step by SyncPhotographer; empty when the photo has no photographer.
	PhotographerID          string `json:"photographerId,omitempty"`
	PhotographerHandle      string `json:"photographerHandle,omitempty"`
	PhotographerDisplayName string `json:"photographerDisplayName,omitempty"`

	CreatedAt time.Time `json:"createdAt" doc:"Capture time by the photographer's camera clock (the ulid's time)."`
	UpdatedAt time.Time `json:"updatedAt"`

	// HiddenBibs are bibs dropped from the photo at a runner's request
	// (hide), kept so that a later request to delete that runner's photos
	// finds it. Never shown.
	HiddenBibs []string `json:"-"`
}

// Dimensions are an image's size in pixels.
type Dimensions struct {
	Width  int `json:"width" minimum:"1" maximum:"100000"`
	Height int `json:"height" minimum:"1" maximum:"100000"`
}

// Record is a processed-photo record as the pipeline posts it after
// Rekognition and fan-out. The organizer comes from the caller and the event
// from the request, never from the record.
type Record struct {
	// ULID identifies the photo and makes ingest idempotent. When empty a
	// new one is generated (and a retry then creates a second photo).
	ULID             string
	OriginalFilename string
	RawKey           string
	ProcessedKey     string
	S3URI            string
	Dimensions       Dimensions
	Format           string
	Size             int64
	Bibs             []string
	FaceIDs          []string
	PhotographerID   string
	// CreatedAt is the photo's capture time, by the photographer's camera
	// clock (EXIF DateTimeOriginal with its offset), to the millisecond.
	// It is also the ULID's time: it defaults to it (so that re-posting a
	// record always yields byte-identical items), a ULID generated for
	// the record is minted at it, and a CreatedAt that differs from a
	// given ULID's time is refused. The pipeline therefore mints the ULID
	// at the capture time; without either, the ingest time stands in, and
	// such a photo is not found by passing time. Every search orders by
	// this one time; the search by passing time adds the photographer's
	// camera clock offset (Timing.SetClock).
	CreatedAt time.Time
}

var (
	entropyMu sync.Mutex
	entropy   = ulid.Monotonic(rand.Reader, 0)
)

// NewULID returns a new ULID for time t.
func NewULID(t time.Time) string {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return ulid.MustNew(ulid.Timestamp(t), entropy).String()
}

// validate checks the record's own fields (not against the truth) and
// returns its normalized copy. prefix locates its fields in errors (e.g.
// "photos[3].").
func (r Record) validate(ps *problems, prefix string, now time.Time) Record {
	n := len(ps.list)
	if r.ULID == "" {
		// createdAt is the ulid's time: a new ulid is minted at it.
		at := now
		if !r.CreatedAt.IsZero() {
			at = r.CreatedAt
		}
		r.ULID = NewULID(at)
	} else if !ValidULID(r.ULID) {
		ps.add(prefix+"ulid", "must be a canonical 26-character ULID", printable(r.ULID))
	}
	checkText(ps, prefix+"originalFilename", r.OriginalFilename, true, MaxFilenameLen)
	checkText(ps, prefix+"rawKey", r.RawKey, true, MaxKeyLen)
	checkText(ps, prefix+"processedKey", r.ProcessedKey, true, MaxKeyLen)
	checkText(ps, prefix+"s3Uri", r.S3URI, true, MaxS3URILen)
	if r.S3URI != "" && !strings.HasPrefix(r.S3URI, "s3://") {
		ps.add(prefix+"s3Uri", "must start with s3://", nil)
	}
	if r.Dimensions.Width < 1 || r.Dimensions.Width > 100000 {
		ps.add(prefix+"dimensions.width", "must be between 1 and 100000", r.Dimensions.Width)
	}
	if r.Dimensions.Height < 1 || r.Dimensions.Height > 100000 {
		ps.add(prefix+"dimensions.height", "must be between 1 and 100000", r.Dimensions.Height)
	}
	checkText(ps, prefix+"format", r.Format, true, MaxFormatLen)
	if r.Size < 0 || r.Size > MaxSize {
		ps.add(prefix+"size", fmt.Sprintf("must be between 0 and %d bytes", MaxSize), r.Size)
	}
	if len(r.Bibs) > MaxBibs {
		ps.add(prefix+"bibs", fmt.Sprintf("holds more than %d bibs", MaxBibs), len(r.Bibs))
	} else {
		bibs := make([]string, 0, len(r.Bibs))
		for i, b := range r.Bibs {
			if !ValidBib(b) {
				ps.add(fmt.Sprintf("%sbibs[%d]", prefix, i), "must match "+BibPattern, printable(b))
			} else if !slices.Contains(bibs, b) { // a bib seen twice is one bib
				bibs = append(bibs, b)
			}
		}
		r.Bibs = bibs
	}
	if len(r.FaceIDs) > MaxFaces {
		ps.add(prefix+"faceIds", fmt.Sprintf("holds more than %d face ids", MaxFaces), len(r.FaceIDs))
	} else {
		for i, f := range r.FaceIDs {
			checkText(ps, fmt.Sprintf("%sfaceIds[%d]", prefix, i), f, true, MaxFaceIDLen)
		}
		r.FaceIDs = append([]string{}, r.FaceIDs...)
	}
	if r.PhotographerID != "" {
		checkID(ps, prefix+"photographerId", r.PhotographerID)
	}
	if len(ps.list) == n {
		// The ulid's time orders the gallery and the photographer index, so
		// it is checked even when createdAt is given: a ulid from the year
		// 10889 would sit first in "newest first" for ever.
		id, _ := ulid.ParseStrict(r.ULID)
		idTime := ulid.Time(id.Time())
		latest := now.Add(MaxClockSkew).UTC()
		if msg := implausible(idTime, latest); msg != "" {
			ps.add(prefix+"ulid", "its time (the first 10 characters) "+msg, ISOMillis(idTime))
		}
		// createdAt is the ulid's time, so that every search orders by the
		// same time: the gallery and bib search by ulid, the photographer
		// search by createdAt (GSI2SK).
		if r.CreatedAt.IsZero() {
			r.CreatedAt = idTime // the default, checked above
		} else if msg := implausible(MillisUTC(r.CreatedAt), latest); msg != "" {
			ps.add(prefix+"createdAt", msg, ISOMillis(r.CreatedAt))
		} else if r.CreatedAt = MillisUTC(r.CreatedAt); !r.CreatedAt.Equal(idTime) {
			ps.add(prefix+"createdAt", "must be the ulid's time "+ISOMillis(idTime)+" (or be omitted): both order the searches", ISOMillis(r.CreatedAt))
		}
		r.CreatedAt = MillisUTC(r.CreatedAt)
	}
	return r
}

// implausible says why t is not a plausible time for a photo ("" if it is):
// it must be from 2000 on and not after latest, which is the service's
// clock plus MaxClockSkew.
func implausible(t, latest time.Time) string {
	if t.UTC().Year() < 2000 {
		return "must be from 2000 on"
	}
	if t.After(latest) {
		return fmt.Sprintf("must not be in the future: at most %v ahead of the server's clock, i.e. not after %s", MaxClockSkew, ISOMillis(latest))
	}
	return ""
}

// photo builds the Photo a validated record becomes.
func (r Record) photo(org, event string, ph *Photographer) *Photo {
	p := &Photo{
		ULID: r.ULID, OrgID: org, EventID: event,
		OriginalFilename: r.OriginalFilename, RawKey: r.RawKey, ProcessedKey: r.ProcessedKey, S3URI: r.S3URI,
		Dimensions: r.Dimensions, Format: r.Format, Size: r.Size,
		Bibs: r.Bibs, BibCount: len(r.Bibs), FaceIDs: r.FaceIDs, FaceCount: len(r.FaceIDs),
		CreatedAt: r.CreatedAt, UpdatedAt: r.CreatedAt,
	}
	if ph != nil {
		p.PhotographerID, p.PhotographerHandle, p.PhotographerDisplayName = ph.ID, ph.Handle, ph.DisplayName
	}
	return p
}
