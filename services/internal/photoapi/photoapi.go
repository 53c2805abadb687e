// Package photoapi is PhotoService's HTTP API (Huma v2): organizers manage
// their events, photographers, assignments and runners; the processing
// pipeline posts processed photos; organizers search them by bib, by
// photographer, by event or by when a runner passed each camera (from the
// race timing they import); runners search published events by bib and by
// passing time.
//
// NewAPI builds the API with its routes (Register adds them to any
// huma.API); Run wires the real dependencies and serves; the photo-api
// command and the dev runner both call Run. Domain errors become RFC 9457
// problems in one place (errors.go), which every route reaches through
// server.Handle.
//
// Identity: a bearer JWT verified by sdk/auth through
// services/internal/server. Organizer endpoints need the "organizer" role
// and act on the organizer named by the token's "org" claim only; an id of
// another organizer's event, photographer or photo answers 404, and
// another organizer's cursor 400. Admin endpoints need the "admin" role.
// The public runner search needs no token and covers published events only.
package photoapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Deps are what the routes need: the domain's roles (photobackend builds
// them). Register reads the roles only when a request arrives, so the spec
// can be generated with a zero Deps.
type Deps struct {
	Ingest    *photo.Ingest    // the pipeline's ingest routes
	Search    *photo.Search    // the organizers' searches and the public runner search
	Directory *photo.Directory // admin, events, photographers, assignments, runners, photographer sync
	Privacy   *photo.Privacy   // photo deletes and bib privacy requests
	Timing    *photo.Timing    // timing points, photographers' positions and clocks, runners' splits
	Log       *slog.Logger     // default slog.Default()
	// Limits rate-limit the public name search (the zero Limits: none).
	Limits server.Limits
	// Bounds are the operations' deadlines and the in-flight bound (the
	// zero Bounds: the defaults).
	Bounds server.Bounds
	// Originals signs organizers' links to originals (nil: none, 503);
	// a link lives OriginalTTL (default DefaultOriginalTTL).
	Originals   Originals
	OriginalTTL time.Duration
}

// Tags group the operations in the spec.
const (
	tagAdmin     = server.TagAdmin
	tagDirectory = "Organizer: events, photographers, runners"
	tagIngest    = "Pipeline: photo ingest"
	tagSearch    = "Organizer: search"
	tagPrivacy   = "Organizer: deletion and privacy"
	tagSync      = "Organizer: photographer sync"
	tagTiming    = "Organizer: race timing"
	tagPublic    = "Public: runner search"
)

// handlers holds the dependencies of every route.
type handlers struct {
	ingest  *photo.Ingest
	search  *photo.Search
	dir     *photo.Directory
	privacy *photo.Privacy
	timing  *photo.Timing
	log     *slog.Logger
	problem func(error) error // the domain's errors as problems (errors.go)

	originals   Originals
	originalTTL time.Duration
}

// Register adds every PhotoService route to api.
func Register(api huma.API, d Deps) {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.OriginalTTL <= 0 {
		d.OriginalTTL = DefaultOriginalTTL
	}
	h := &handlers{ingest: d.Ingest, search: d.Search, dir: d.Directory, privacy: d.Privacy, timing: d.Timing, log: d.Log, problem: problems(d.Log).Problem,
		originals: d.Originals, originalTTL: d.OriginalTTL}
	server.ClientIP(api, d.Limits.Proxies)
	server.RateLimit(api, d.Limits, limitedOps) // before the operations it limits
	h.registerOrganizers(api)
	h.registerEvents(api)
	h.registerPhotographers(api)
	h.registerAssignments(api)
	h.registerRunners(api)
	h.registerIngest(api)
	h.registerSearch(api)
	h.registerNameSearch(api)
	h.registerOriginals(api)
	h.registerPrivacy(api)
	h.registerSync(api)
	h.registerTiming(api)
	h.registerNearby(api)
	h.registerPublic(api)
	h.registerPublicEvent(api)
	h.registerPublicNameSearch(api)
	server.DocumentRetryAfter(api)
}

// refusals are the error statuses every operation with a token declares:
// a malformed or invalid request (400, 422), no or a bad token (401), not
// the role or organization it needs (403), an id the caller's organization
// does not have (404).
var refusals = server.Fails(http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity)

// conflicts is the 409 of an operation that may meet photo.ErrConflict:
// the id already exists, or a concurrent change won.
var conflicts = server.Fails(http.StatusConflict)

// organizer returns the caller's organizer id: the token's org claim, for a
// caller with the organizer role.
func organizer(ctx context.Context) (string, error) {
	p, err := server.RequireRole(ctx, auth.RoleOrganizer)
	if err != nil {
		return "", err
	}
	if !photo.ValidID(p.OrgID) {
		return "", huma.Error403Forbidden("the token names no valid organizer (org claim)")
	}
	return p.OrgID, nil
}

// Common parameters (exported so that Huma sees them when embedded in
// inputs). Patterns mirror photo.IDPattern, photo.BibPattern and
// photo.ULIDPattern (struct tags cannot name constants; a test checks they
// agree).
// EventPath is the {eventId} path parameter.
type EventPath struct {
	EventID string `path:"eventId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" doc:"Event id." example:"seoul-marathon-2024"`
}

// PhotographerPath is the {photographerId} path parameter.
type PhotographerPath struct {
	PhotographerID string `path:"photographerId" pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64" doc:"Photographer id." example:"ph_01ABCXYZ"`
}

// BibPath is the {bib} path parameter.
type BibPath struct {
	Bib string `path:"bib" pattern:"^[A-Za-z0-9-]{1,16}$" maxLength:"16" doc:"Bib number." example:"1234"`
}

// ULIDPath is the {ulid} path parameter.
type ULIDPath struct {
	ULID string `path:"ulid" pattern:"^[0-7][0-9A-HJKMNP-TV-Z]{25}$" doc:"Photo ULID." example:"01HXY8FWZM5KJQD9K3Y6R8NZTP"`
}

// pageRequest is q as the domain takes it.
func pageRequest(q server.PageQuery) photo.PageRequest {
	return photo.PageRequest{Limit: q.Limit, Cursor: q.Cursor}
}

// emptyOutput is a 204 response.
type emptyOutput struct{}
