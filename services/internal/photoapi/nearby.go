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

// NearbyQuery is the window and page of the search by passing time, a
// named exception to server.PageQuery: its cursor holds a position per
// positioned photographer, so it may be as long as the domain's merged
// cursor (16384), like PhotographerPageQuery's.
type NearbyQuery struct {
	Window int    `query:"window" minimum:"1" maximum:"600" default:"60" doc:"Seconds either side of the runner's expected passing time at each camera, 1..600."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size, 1..100"`
	Cursor string `query:"cursor" maxLength:"16384" doc:"Cursor from the previous page's nextCursor (it holds a position per photographer)."`
}

func (q NearbyQuery) window() time.Duration { return time.Duration(q.Window) * time.Second }

func (q NearbyQuery) page() photo.PageRequest {
	return photo.PageRequest{Limit: q.Limit, Cursor: q.Cursor}
}

// NearbyFound is how a photo was found by time. It is embedded, so
// exported: Huma's schema leaves out unexported embedded fields, and the
// spec would not describe them.
type NearbyFound struct {
	Match      photo.NearbyMatch `json:"match"`
	CapturedAt time.Time         `json:"capturedAt" doc:"The photo's capture time corrected by the photographer's camera clock offset."`
	HasBib     bool              `json:"hasBib" doc:"Whether the photo already shows the bib (bib search finds it too)."`
}

func matchOf(p photo.NearbyPhoto) NearbyFound {
	return NearbyFound{Match: p.Match, CapturedAt: p.CapturedAt, HasBib: p.HasBib}
}

type nearbyPhoto struct {
	Photo *photo.Photo `json:"photo"`
	NearbyFound
}

type nearbyOutput struct {
	Body struct {
		Bib        string        `json:"bib"`
		Photos     []nearbyPhoto `json:"photos" doc:"Earliest first, by corrected capture time."`
		NextCursor string        `json:"nextCursor,omitempty" doc:"Absent on the last page."`
	}
}

type publicNearbyPhoto struct {
	Photo publicPhoto `json:"photo"`
	NearbyFound
}

type publicNearbyOutput struct {
	Body struct {
		Bib        string              `json:"bib"`
		Photos     []publicNearbyPhoto `json:"photos" doc:"Earliest first, by corrected capture time."`
		NextCursor string              `json:"nextCursor,omitempty" doc:"Absent on the last page."`
	}
}

// nearbyDoc says what the search by passing time finds and what it costs.
var nearbyDoc = fmt.Sprintf("For each of the runner's split times (POST /events/{eventId}/splits) and each photographer with a position "+
	"(PUT .../position), the photographer's photos whose capture time, corrected by their camera clock offset, is within window seconds "+
	"of when the runner was expected in front of the camera; photos without the bib too. One timeline, earliest first, with one cursor; "+
	"each photo says which split matched it and whether it already shows the bib. A page costs one read per positioned photographer "+
	"(at most %d) that still has photos in range. A bib under a runner's privacy request finds nothing, like a bib without splits.", photo.MaxPositions)

// registerNearby adds the search by passing time: an organizer's, and the
// runners' on published events.
func (h *handlers) registerNearby(api huma.API) {
	huma.Register(api, server.Op("search-nearby", http.MethodGet, "/events/{eventId}/bibs/{bib}/nearby-photos",
		"Photos taken when a runner passed each camera", tagSearch, refusals, server.Describe(nearbyDoc)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			BibPath
			NearbyQuery
		}) (*nearbyOutput, error) {
			p, err := h.search.Nearby(ctx, org, in.EventID, in.Bib, in.window(), in.page())
			out := &nearbyOutput{}
			out.Body.Bib, out.Body.NextCursor = p.Bib, p.Cursor
			out.Body.Photos = make([]nearbyPhoto, len(p.Photos))
			for i, ph := range p.Photos {
				out.Body.Photos[i] = nearbyPhoto{Photo: ph.Photo, NearbyFound: matchOf(ph)}
			}
			return out, err
		}))
	huma.Register(api, server.Op("public-search-nearby", http.MethodGet, "/public/events/{eventId}/bibs/{bib}/nearby-photos",
		"Runner search: photos taken when a bib passed each camera, in a published event", tagPublic, server.NoToken(),
		server.Describe("No token needed. Only events their organizer has published; any other event answers 404. "+
			"Photos show what a gallery renders. "+publicSearchLimitDoc+nearbyDoc),
		server.Fails(http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusTooManyRequests)),
		server.Handle(server.Anyone, h.problem, func(ctx context.Context, _ struct{}, in *struct {
			EventPath
			BibPath
			NearbyQuery
		}) (*publicNearbyOutput, error) {
			p, err := h.search.PublicNearby(ctx, in.EventID, in.Bib, in.window(), in.page())
			out := &publicNearbyOutput{}
			out.Body.Bib, out.Body.NextCursor = p.Bib, p.Cursor
			out.Body.Photos = make([]publicNearbyPhoto, len(p.Photos))
			for i, ph := range p.Photos {
				out.Body.Photos[i] = publicNearbyPhoto{Photo: toPublic(ph.Photo), NearbyFound: matchOf(ph)}
			}
			return out, err
		}))
}
