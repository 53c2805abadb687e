package photoapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
	"github.com/pacerhq/pacer/services/internal/server"
)

// NameQuery is the query of the name searches. Its bounds are the
// domain's (photo.MaxNameQueryLen, MaxNamePage, MaxNameOffset).
type NameQuery struct {
	Name   string `query:"name" required:"true" minLength:"1" maxLength:"100" doc:"The runner's name or part of it, as typed: Hangul or Latin; typos are tolerated, and a short name matches names starting with it." example:"김민수"`
	Limit  int    `query:"limit" minimum:"1" maximum:"50" default:"20" doc:"Page size, 1..50."`
	Offset int    `query:"offset" minimum:"0" maximum:"1000" doc:"Runners of the ranking to skip: the previous page's nextOffset."`
}

// nameMatch is a runner a name search found: what a runner page needs to
// pick their bib, and nothing more.
type nameMatch struct {
	Bib    string `json:"bib"`
	Name   string `json:"name"`
	Photos int    `json:"photos" doc:"Photos showing the bib."`
}

type nameOutput struct {
	Body struct {
		Runners    []nameMatch `json:"runners" doc:"Best first: the exact name, then names starting with it, then by similarity, then by bib."`
		NextOffset int         `json:"nextOffset,omitempty" doc:"Pass as offset for the next page; absent on the last page."`
	}
}

func nameOut(p photo.NamePage) *nameOutput {
	out := &nameOutput{}
	out.Body.Runners = make([]nameMatch, len(p.Runners))
	for i, r := range p.Runners {
		out.Body.Runners[i] = nameMatch{Bib: r.Bib, Name: r.Name, Photos: r.Photos}
	}
	out.Body.NextOffset = p.NextOffset
	return out
}

// nameSearchClass is the rate-limit class of the public name search.
const nameSearchClass = "name-search"

// nameDoc says how the name search matches and ranks, for the spec.
const nameDoc = "Typo-tolerant (trigram similarity over the name with Hangul syllables split into their letters), " +
	"and a name also matches when it, or one of its words, starts with what was typed (a two-syllable Hangul name, a half-typed one). " +
	"Runners whose bib is hidden at their request never appear."

// nameQueryFields are the name search's fields, in the query string.
var nameQueryFields = []string{"name", "limit", "offset"}

// registerNameSearch adds the organizers' name search.
func (h *handlers) registerNameSearch(api huma.API) {
	huma.Register(api, server.Op("search-runners-by-name", http.MethodGet, "/events/{eventId}/runners/search",
		"Find an event's runners by name, with their bibs and photo counts", tagSearch, refusals, server.Describe(nameDoc)),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			NameQuery
		}) (*nameOutput, error) {
			p, err := h.search.ByName(ctx, photo.NameQuery{Org: org, Event: in.EventID, Name: in.Name, Limit: in.Limit, Offset: in.Offset})
			return nameOut(p), inQuery(err, nameQueryFields...)
		}))
}

// registerPublicNameSearch adds the runners' name search, rate-limited by
// client address.
func (h *handlers) registerPublicNameSearch(api huma.API) {
	huma.Register(api, server.Op("public-search-by-name", http.MethodGet, "/public/events/{eventId}/runners/search",
		"Runner search: find your bib by name in a published event whose organizer allows it", tagPublic, server.NoToken(),
		server.Describe("No token needed. Only published events whose organizer turned publicNameSearch on; any other event answers 404, "+
			"as an unpublished one does to the bib search, so the answer does not tell which events exist. "+
			"Rate-limited per client address (PACER_RATE_NAME_SEARCH_ADDRESS): past it, 429 with Retry-After. "+nameDoc),
		server.Fails(http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity, http.StatusTooManyRequests)),
		server.Handle(server.Anyone, h.problem, func(ctx context.Context, _ struct{}, in *struct {
			EventPath
			NameQuery
		}) (*nameOutput, error) {
			p, err := h.search.PublicByName(ctx, in.EventID, photo.NameQuery{Name: in.Name, Limit: in.Limit, Offset: in.Offset})
			return nameOut(p), inQuery(err, nameQueryFields...)
		}))
}

// publicEventOutput is what the runner page shows of a published event.
type publicEventOutput struct {
	Body struct {
		EventID    string `json:"eventId"`
		Name       string `json:"name"`
		StartsOn   string `json:"startsOn,omitempty"`
		NameSearch bool   `json:"nameSearch" doc:"Whether runners may find their bib by name (public-search-by-name)."`
	}
}

// registerPublicEvent adds the runner page's view of a published event.
func (h *handlers) registerPublicEvent(api huma.API) {
	huma.Register(api, server.Op("public-get-event", http.MethodGet, "/public/events/{eventId}",
		"Runner page: a published event, and whether it can be searched by name", tagPublic, server.NoToken(),
		server.Describe("No token needed. Only published events; any other answers 404."),
		server.Fails(http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity)),
		server.Handle(server.Anyone, h.problem, func(ctx context.Context, _ struct{}, in *EventPath) (*publicEventOutput, error) {
			ev, err := h.search.PublicEvent(ctx, in.EventID)
			out := &publicEventOutput{}
			out.Body.EventID, out.Body.Name, out.Body.StartsOn, out.Body.NameSearch = ev.ID, ev.Name, ev.StartsOn, ev.PublicNameSearch
			return out, err
		}))
}

// DefaultNameSearchAddress is the public name search's budget per client
// address, deployment-wide.
const DefaultNameSearchAddress = "30/m"

// DefaultPublicSearchAddress is the public photo searches' budget per
// client address (by bib and by passing time together), deployment-wide:
// 5 a second, a runner page's two searches and their pages many times
// over, and room for a few dozen runners behind one finish-area network.
const DefaultPublicSearchAddress = "300/m"

// publicSearchClass is the rate-limit class of the public photo searches:
// by bib, and by passing time (a page of which may cost a Query per
// positioned photographer).
const publicSearchClass = "public-search"

// publicSearchLimitDoc says how the public photo searches are limited,
// for the spec.
const publicSearchLimitDoc = "Rate-limited per client address with the other public photo search (PACER_RATE_PUBLIC_SEARCH_ADDRESS): past it, 429 with Retry-After. "

// limitedOps are the operations photo-api's limits apply to, by class.
var limitedOps = map[string]string{
	"public-search-by-name": nameSearchClass,
	"public-search-by-bib":  publicSearchClass,
	"public-search-nearby":  publicSearchClass,
}

// LimitSettings are photo-api's rate-limit settings (docs/ratelimit.md).
type LimitSettings struct {
	NameSearchAddress   string
	PublicSearchAddress string
	server.LimitSharing
}

// Declare declares the settings on s.
func (ls *LimitSettings) Declare(s *config.Set) {
	s.String(&ls.NameSearchAddress, "rate-name-search-address", "PACER_RATE_NAME_SEARCH_ADDRESS", DefaultNameSearchAddress, "public name searches from one client address, deployment-wide (N/s, N/m, N/h or off; an IPv6 address counts as its /64)")
	s.String(&ls.PublicSearchAddress, "rate-public-search-address", "PACER_RATE_PUBLIC_SEARCH_ADDRESS", DefaultPublicSearchAddress, "public photo searches (by bib and by passing time, together) from one client address, deployment-wide (N/s, N/m, N/h or off)")
	ls.LimitSharing.Declare(s)
}

// Limits parses the settings; an error names the setting at fault. The
// zero LimitSettings limits nothing.
func (ls LimitSettings) Limits(refused func(class string, by ratelimit.By)) (server.Limits, error) {
	if ls.NameSearchAddress == "" && ls.PublicSearchAddress == "" {
		return server.Limits{}, nil
	}
	return ls.LimitSharing.Limits(refused,
		server.Budget{Env: "PACER_RATE_NAME_SEARCH_ADDRESS", Value: ls.NameSearchAddress, Class: nameSearchClass, By: ratelimit.ByAddress},
		server.Budget{Env: "PACER_RATE_PUBLIC_SEARCH_ADDRESS", Value: ls.PublicSearchAddress, Class: publicSearchClass, By: ratelimit.ByAddress})
}
