package photoapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

type photosOutput struct {
	Body struct {
		Photos     []*photo.Photo `json:"photos"`
		NextCursor string         `json:"nextCursor,omitempty" doc:"Absent on the last page."`
	}
}

func pageOut(p photo.Page) *photosOutput {
	out := &photosOutput{}
	out.Body.Photos, out.Body.NextCursor = p.Photos, p.Cursor
	return out
}

type bibOutput struct {
	Body struct {
		Bib        string         `json:"bib"`
		Matched    bool           `json:"matched" doc:"Whether the bib is among the event's runners."`
		Runner     *photo.Runner  `json:"runner,omitempty"`
		Photos     []*photo.Photo `json:"photos" doc:"Newest first."`
		NextCursor string         `json:"nextCursor,omitempty" doc:"Absent on the last page."`
	}
}

func bibOut(p photo.BibPage) *bibOutput {
	out := &bibOutput{}
	out.Body.Bib, out.Body.Runner, out.Body.Matched = p.Bib, p.Runner, p.Runner != nil
	out.Body.Photos, out.Body.NextCursor = p.Photos, p.Cursor
	return out
}

type photoOutput struct{ Body *photo.Photo }

// publicPhoto is what the public runner search shows of a photo: what a
// gallery renders, without what only the organizer may see (the raw
// upload's key, Rekognition face ids, file details).
type publicPhoto struct {
	ULID                    string           `json:"ulid"`
	EventID                 string           `json:"eventId"`
	ProcessedKey            string           `json:"processedKey" doc:"S3 key of the processed image to render."`
	S3URI                   string           `json:"s3Uri" doc:"s3:// URI of the processed image."`
	Dimensions              photo.Dimensions `json:"dimensions"`
	Format                  string           `json:"format"`
	Bibs                    []string         `json:"bibs"`
	PhotographerHandle      string           `json:"photographerHandle,omitempty"`
	PhotographerDisplayName string           `json:"photographerDisplayName,omitempty"`
	CreatedAt               time.Time        `json:"createdAt"`
}

// publicBibOutput is the public runner search's page. It has no runner:
// anyone may call it, and a bib must not turn into the runner's name.
type publicBibOutput struct {
	Body struct {
		Bib        string        `json:"bib"`
		Photos     []publicPhoto `json:"photos" doc:"Newest first."`
		NextCursor string        `json:"nextCursor,omitempty" doc:"Absent on the last page."`
	}
}

func publicBibOut(p photo.BibPage) *publicBibOutput {
	out := &publicBibOutput{}
	out.Body.Bib, out.Body.NextCursor = p.Bib, p.Cursor
	out.Body.Photos = make([]publicPhoto, len(p.Photos))
	for i, ph := range p.Photos {
		out.Body.Photos[i] = toPublic(ph)
	}
	return out
}

// toPublic is what the public searches show of a photo.
func toPublic(ph *photo.Photo) publicPhoto {
	return publicPhoto{
		ULID: ph.ULID, EventID: ph.EventID, ProcessedKey: ph.ProcessedKey, S3URI: ph.S3URI,
		Dimensions: ph.Dimensions, Format: ph.Format, Bibs: ph.Bibs,
		PhotographerHandle: ph.PhotographerHandle, PhotographerDisplayName: ph.PhotographerDisplayName, CreatedAt: ph.CreatedAt,
	}
}

// newestDoc says what "newest first" means, the same in every search.
const newestDoc = "Newest first means by the ulid's time, which is createdAt (ingest keeps them equal), " +
	"the same in the gallery, bib search and photographer search. Photos of one millisecond come in ulid order " +
	"(in a photographer search, across events; within one event, in index order)."

// PhotographerPageQuery is the page of search-by-photographer, a named
// exception to server.PageQuery: its cursor holds a position per event, so
// it may be as long as the domain's merged cursor (16384), and a page may
// hold up to photo.MaxPageSize (500) photos, since each page costs one read
// per event that still has photos whatever its size: larger pages read
// less often per photo. Its default is server's.
type PhotographerPageQuery struct {
	Limit  int    `query:"limit" minimum:"1" maximum:"500" default:"20" doc:"Page size, 1..500"`
	Cursor string `query:"cursor" maxLength:"16384" doc:"Cursor from the previous page's nextCursor (it holds a position per event, so it is longer than other cursors)."`
}

// registerSearch adds an organizer's searches: an event's gallery, one
// photo, and photos by bib or by photographer.
func (h *handlers) registerSearch(api huma.API) {
	huma.Register(api, server.Op("event-gallery", http.MethodGet, "/events/{eventId}/photos", "An event's photos, newest first", tagSearch, refusals,
		server.Describe(newestDoc)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			server.PageQuery
		}) (*photosOutput, error) {
			p, err := h.search.Gallery(ctx, org, in.EventID, pageRequest(in.PageQuery))
			return pageOut(p), err
		}))
	huma.Register(api, server.Op("get-photo", http.MethodGet, "/events/{eventId}/photos/{ulid}", "One photo", tagSearch, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			ULIDPath
		}) (*photoOutput, error) {
			p, err := h.search.Photo(ctx, org, in.EventID, in.ULID)
			return &photoOutput{Body: p}, err
		}))
	huma.Register(api, server.Op("search-by-bib", http.MethodGet, "/events/{eventId}/bibs/{bib}/photos",
		"Photos showing a bib, newest first", tagSearch, refusals,
		server.Describe("A page costs one read of the bib's entries and one batch read per 100 photos. Includes the runner's name when the bib is on the entry list. "+newestDoc)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			BibPath
			server.PageQuery
		}) (*bibOutput, error) {
			p, err := h.search.ByBib(ctx, org, in.EventID, in.Bib, pageRequest(in.PageQuery))
			return bibOut(p), err
		}))
	huma.Register(api, server.Op("search-by-photographer", http.MethodGet, "/photographers/{photographerId}/photos",
		"A photographer's photos, newest first, optionally in one event", tagSearch, refusals,
		server.Describe(fmt.Sprintf("Without eventId: one timeline across every event the photographer is assigned to (at most %d; more answers 422 naming eventId), "+
			"merged from one read per event; a page costs one read per event that still has photos (every event on the first page). "+
			"Photos of an event the photographer was removed from are listed by naming it in eventId. "+newestDoc, photo.MaxSearchEvents))),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			PhotographerPath
			EventID string `query:"eventId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" doc:"Only photos of this event."`
			PhotographerPageQuery
		}) (*photosOutput, error) {
			p, err := h.search.ByPhotographer(ctx, org, in.PhotographerID, in.EventID, photo.PageRequest{Limit: in.Limit, Cursor: in.Cursor})
			return pageOut(p), err
		}))
}

// registerPublic adds the runners' search, which needs no token.
func (h *handlers) registerPublic(api huma.API) {
	huma.Register(api, server.Op("public-search-by-bib", http.MethodGet, "/public/events/{eventId}/bibs/{bib}/photos",
		"Runner search: photos showing a bib in a published event", tagPublic, server.NoToken(),
		server.Describe("No token needed. Only events their organizer has published; any other event answers 404. "+
			"Photos show what a gallery renders; runner names, face ids and raw upload keys are for organizers only. "+publicSearchLimitDoc+newestDoc),
		server.Fails(http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusTooManyRequests)),
		server.Handle(server.Anyone, h.problem, func(ctx context.Context, _ struct{}, in *struct {
			EventPath
			BibPath
			server.PageQuery
		}) (*publicBibOutput, error) {
			p, err := h.search.PublicByBib(ctx, in.EventID, in.Bib, pageRequest(in.PageQuery))
			return publicBibOut(p), err
		}))
}
