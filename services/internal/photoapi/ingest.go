package photoapi

import (
	"context"
	"net/http"
	"reflect"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

// recordBody is a processed-photo record as the pipeline posts it. Field
// names follow the stored PHOTO item's (docs/photo.md). Its limits and the docs that name
// them are set by TransformSchema (limits.go).
type recordBody struct {
	ULID             string           `json:"ulid,omitempty" pattern:"^[0-7][0-9A-HJKMNP-TV-Z]{25}$" example:"01HXY8FWZM5KJQD9K3Y6R8NZTP"`
	OriginalFilename string           `json:"originalFilename" minLength:"1" example:"DSC_1234.jpg"`
	RawKey           string           `json:"rawKey" minLength:"1" example:"snaprace-kr/seoul-marathon-2024/raw/DSC_1234.jpg"`
	ProcessedKey     string           `json:"processedKey" minLength:"1" example:"snaprace-kr/seoul-marathon-2024/processed/01HXY8FWZM5KJQD9K3Y6R8NZTP.jpg"`
	S3URI            string           `json:"s3Uri" pattern:"^s3://" example:"s3://snaprace-images-prod/snaprace-kr/seoul-marathon-2024/processed/01HXY8FWZM5KJQD9K3Y6R8NZTP.jpg"`
	Dimensions       photo.Dimensions `json:"dimensions"`
	Format           string           `json:"format" minLength:"1" example:"jpeg"`
	Size             int64            `json:"size" minimum:"0" example:"2048576"`
	Bibs             []string         `json:"bibs" maxItems:"50" doc:"Detected bibs, each matching ^[A-Za-z0-9-]{1,16}$. Bibs not among the event's runners are kept, searchable, and reported in unmatchedBibs."`
	FaceIDs          []string         `json:"faceIds" maxItems:"100" doc:"Rekognition face ids."`
	PhotographerID   string           `json:"photographerId,omitempty" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" doc:"Must be a photographer of your organization assigned to the event."`
	CreatedAt        *time.Time       `json:"createdAt,omitempty"`
}

func (r recordBody) record() photo.Record {
	rec := photo.Record{
		ULID: r.ULID, OriginalFilename: r.OriginalFilename, RawKey: r.RawKey, ProcessedKey: r.ProcessedKey, S3URI: r.S3URI,
		Dimensions: r.Dimensions, Format: r.Format, Size: r.Size, Bibs: r.Bibs, FaceIDs: r.FaceIDs, PhotographerID: r.PhotographerID,
	}
	if r.CreatedAt != nil {
		rec.CreatedAt = *r.CreatedAt
		if rec.CreatedAt.IsZero() {
			// 0001-01-01T00:00:00Z was sent: keep it apart from "absent"
			// (which takes the ulid's time) so that it is refused as a
			// createdAt before 2000.
			rec.CreatedAt = rec.CreatedAt.Add(time.Millisecond)
		}
	}
	return rec
}

// ingestResult is one photo's outcome.
type ingestResult struct {
	Index          int          `json:"index" doc:"Position in the request."`
	ULID           string       `json:"ulid,omitempty"`
	Status         string       `json:"status" enum:"created,exists,failed,suppressed" doc:"created: written now. exists: a photo with this ulid was already stored; nothing was changed. failed: not known to be written; re-posting is safe. suppressed: not kept, because a runner asked for every photo of one of its bibs (in suppressedBibs) to be deleted."`
	Error          string       `json:"error,omitempty"`
	UnmatchedBibs  []string     `json:"unmatchedBibs,omitempty" doc:"Bibs of the written photo not among the event's runners: indexed and searchable, flagged for follow-up. Only when the status is created or failed (otherwise nothing posted was written)."`
	SuppressedBibs []string     `json:"suppressedBibs,omitempty" doc:"Bibs with a runner's privacy request in this event: dropped from the photo (hide), or the reason it was not kept (delete)."`
	Photo          *photo.Photo `json:"photo,omitempty" doc:"The stored photo."`
}

func resultOf(i int, ulid string, r photo.IngestResult) ingestResult {
	out := ingestResult{Index: i, ULID: ulid, Status: string(r.Status), UnmatchedBibs: r.UnmatchedBibs, SuppressedBibs: r.SuppressedBibs, Photo: r.Photo}
	if r.Photo != nil {
		out.ULID = r.Photo.ULID
	}
	if r.Err != nil {
		out.Error = "the write did not complete; re-post this photo"
	}
	return out
}

type ingestOutput struct {
	Status int
	Body   ingestResult
}

type batchBody struct {
	Photos []recordBody `json:"photos" nullable:"false" minItems:"1" maxItems:"100" doc:"Up to 100 processed-photo records of the event."`
}

type batchOutput struct {
	Body struct {
		Created    int            `json:"created"`
		Exists     int            `json:"exists"`
		Failed     int            `json:"failed"`
		Suppressed int            `json:"suppressed"`
		Results    []ingestResult `json:"results" doc:"One per photo, in request order."`
	}
}

// registerIngest adds the pipeline's operations: post one processed photo,
// or a batch of them.
func (h *handlers) registerIngest(api huma.API) {
	one := server.Op("ingest-photo", http.MethodPost, "/events/{eventId}/photos",
		"Ingest one processed photo (written atomically with the entries that find it by bib)", tagIngest, refusals, server.Status(http.StatusCreated),
		server.Describe("Writes the photo atomically and idempotently by ulid: 201 when created, 200 with status exists "+
			"(and the stored photo) when the ulid was already stored, in which case nothing changes. "+
			"The photographer must belong to your organization and be assigned to the event."))
	one.Responses = map[string]*huma.Response{"200": {
		Description: "The ulid already existed and nothing changed (status exists, with the stored photo), or the photo was not kept because a runner asked for their photos to be deleted (status suppressed).",
		Content:     map[string]*huma.MediaType{"application/json": {Schema: api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[ingestResult](), true, "")}},
	}}
	huma.Register(api, one, server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
		EventPath
		Body recordBody
	}) (*ingestOutput, error) {
		res, err := h.ingest.Ingest(ctx, org, in.EventID, in.Body.record())
		if err != nil {
			return nil, err
		}
		status := http.StatusCreated
		if res.Status != photo.Created {
			status = http.StatusOK // exists, or suppressed at a runner's request
		}
		return &ingestOutput{Status: status, Body: resultOf(0, in.Body.ULID, res)}, nil
	}))

	huma.Register(api, server.Op("ingest-photos", http.MethodPost, "/events/{eventId}/photos/batch",
		"Ingest up to 100 processed photos with batch writes", tagIngest, refusals, server.MaxBody(2<<20), server.Bulk(),
		server.Describe("Validation is all or nothing: one invalid record rejects the request with 422 naming each bad field "+
			"(body.photos[i]...), and nothing is written. Otherwise each photo gets a result. Existing ulids are skipped; "+
			"the entries that find each photo by bib are written first, in batches (a throttled write is retried with backoff), then each photo "+
			"if it is still absent, so a photo becomes visible only once every one of its bibs finds it, and of concurrent "+
			"posts of one ulid exactly one creates it (the others get exists and the stored photo). A photo reported "+
			"failed is not known to be written: re-post it (safe, by ulid).")),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			Body batchBody
		}) (*batchOutput, error) {
			recs := make([]photo.Record, len(in.Body.Photos))
			for i, r := range in.Body.Photos {
				recs[i] = r.record()
			}
			res, err := h.ingest.IngestBatch(ctx, org, in.EventID, recs)
			if err != nil {
				return nil, err
			}
			return h.batchOut(in.Body.Photos, res), nil
		}))
}

// batchOut is the outcome of a batch of photos: one result per photo, in
// request order, and the count of each status. It logs each photo not
// written.
func (h *handlers) batchOut(photos []recordBody, res []photo.IngestResult) *batchOutput {
	out := &batchOutput{}
	out.Body.Results = make([]ingestResult, len(res))
	for i, r := range res {
		out.Body.Results[i] = resultOf(i, photos[i].ULID, r)
		switch r.Status {
		case photo.Created:
			out.Body.Created++
		case photo.Exists:
			out.Body.Exists++
		case photo.Suppressed:
			out.Body.Suppressed++
		default:
			out.Body.Failed++
			h.log.Warn("photo-api: batch photo not written", "index", i, "err", r.Err)
		}
	}
	return out
}
