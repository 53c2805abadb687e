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
// ahead (asyncevent.Query.Unchanged), is answered 304 without a read;
// otherwise the request is read, and 304 answers a tag that matches what
// the read shows.
func (h *handlers) poll(ctx context.Context, p auth.Principal, in *pollInput) (*pollOutput, error) {
	if in.IfNoneMatch != "" {
		if tag, at := h.tags.pollAt(p.UserID, in.RequestID, in.IfNoneMatch); h.query.Unchanged(at) {
			return &pollOutput{Status: http.StatusNotModified, ETag: tag, CacheControl: pollCacheControl,
				RetryAfter: asyncevent.RetryAfter(h.query.Until(at))}, nil
		}
	}
	r, err := h.query.GetRequest(ctx, asyncevent.Caller{UserID: p.UserID, Admin: p.IsAdmin()}, in.RequestID)
	if err != nil {
		return nil, err
	}
	out := &pollOutput{Status: http.StatusOK, Body: viewOf(r, false), CacheControl: pollCacheControl, RetryAfter: asyncevent.RetryAfter(h.query.PollAfter(r))}
	out.ETag = h.tags.tag(p.UserID, r.RequestID, h.query.PollAt(r), out.Body)
	if in.IfNoneMatch != "" && matches(in.IfNoneMatch, out.ETag) {
		out.Status = http.StatusNotModified
	}
	return out, nil
}
