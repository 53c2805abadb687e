package asynceventapi

import (
	"context"
	"net/http"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
)

// pollInput is a poll of a request, conditional on the tag of an earlier
// answer.
type pollInput struct {
	RequestPath
	IfNoneMatch string `header:"If-None-Match" maxLength:"1024" doc:"The ETag of an earlier answer: 304 while the request still reads as it did"`
}

// pollOutput is a request as its owner sees it, or 304.
type pollOutput struct {
	Status int // 200, or 304
	// ETag is the answer's tag (pollTags).
	ETag string `header:"ETag" doc:"Send it back as If-None-Match: 304 while nothing shown changed"`
	// CacheControl lets the caller's own cache keep the answer and
	// revalidate it on every poll (a browser's fetch sends If-None-Match
	// by itself); no shared cache stores it.
	CacheControl string `header:"Cache-Control"`
	// RetryAfter, on a request that cannot change before then, is when a
	// poll is worth making again (asyncevent.Query.PollAfter).
	RetryAfter string `header:"Retry-After" doc:"Whole seconds before a new read can show a change (an arrival candidate waits for the allocator's watermark); absent when unknown or decided"`
	Body       RequestView
}

// pollCacheControl is every poll answer's Cache-Control.
const pollCacheControl = "private, no-cache"

// poll answers GET /requests/{requestId}. An If-None-Match tag this
// server issued to the caller for the request, with its pollAt still
// ahead (asyncevent.Query.Unchanged) and its place read from the event's
// current line, is answered 304 without reading the request; otherwise
// the request is read, and 304 answers a tag that matches what the read
// shows.
func (h *handlers) poll(ctx context.Context, p auth.Principal, in *pollInput) (*pollOutput, error) {
	if in.IfNoneMatch != "" {
		if out := h.unchanged(ctx, p, in); out != nil {
			return out, nil
		}
	}
	r, err := h.query.GetRequest(ctx, asyncevent.Caller{UserID: p.UserID, Admin: p.IsAdmin()}, in.RequestID)
	if err != nil {
		return nil, err
	}
	out := &pollOutput{Status: http.StatusOK, Body: viewOf(r, false), CacheControl: pollCacheControl, RetryAfter: asyncevent.RetryAfter(h.query.PollAfter(r))}
	g := tagged{pollAt: h.query.PollAt(r), event: r.EventID}
	place, err := h.query.Place(ctx, r)
	if err != nil {
		// The place is extra: the poll answers without it.
		h.log.Warn("asyncevent-api: no place in line", "requestId", r.RequestID, "err", err)
	} else if place != nil {
		out.Body.Place, g.placeVers = placeViewOf(place), place.Version
	}
	out.ETag = h.tags.tag(p.UserID, r.RequestID, g, out.Body)
	if in.IfNoneMatch != "" && matches(in.IfNoneMatch, out.ETag) {
		out.Status = http.StatusNotModified
	}
	return out, nil
}

// unchanged is the 304 for a tag that says the request cannot have
// changed (its pollAt ahead, its place still from the event's current
// line), or nil.
func (h *handlers) unchanged(ctx context.Context, p auth.Principal, in *pollInput) *pollOutput {
	tag, g, ok := h.tags.parse(p.UserID, in.RequestID, in.IfNoneMatch)
	if !ok || !h.query.Unchanged(g.pollAt) {
		return nil
	}
	if v, err := h.query.LineVersion(ctx, g.event); err != nil || v != g.placeVers {
		return nil
	}
	return &pollOutput{Status: http.StatusNotModified, ETag: tag, CacheControl: pollCacheControl,
		RetryAfter: asyncevent.RetryAfter(h.query.Until(g.pollAt))}
}
