package asynceventapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/server"
)

// ParticipationBody is the optional body of a participation. The user is
// the token's subject, never a body field, and any other field (such as
// userId) is rejected.
type ParticipationBody struct {
	HumanToken string `json:"humanToken,omitempty" maxLength:"2048" doc:"The challenge provider's token (Cloudflare Turnstile, hCaptcha or reCAPTCHA, as the deployment is configured), required when the event's humanCheck.required is true; ignored otherwise"`
}

// humanToken is the token b carries: none when the body is absent.
func (b *ParticipationBody) humanToken() string {
	if b == nil {
		return ""
	}
	return b.HumanToken
}

type participateInput struct {
	EventPath
	Body *ParticipationBody `required:"false"`
}

// Accepted is the answer to a participation.
type Accepted struct {
	RequestID   string `json:"requestId" doc:"Poll GET /requests/{requestId} for the outcome"`
	IsDuplicate bool   `json:"isDuplicate" doc:"true when this user already participated; requestId is the original one"`
	HumanCheck  string `json:"humanCheck,omitempty" enum:"admitted-unverified" doc:"admitted-unverified: the event requires a human check, the challenge provider could not be reached, and the event's humanCheck.onUnavailable admitted the participation anyway"`
}

type acceptedOutput struct {
	Body Accepted
}

// registerParticipation adds a user's operations: participate, then poll
// the request and list their own.
func (h *handlers) registerParticipation(api huma.API) {
	huma.Register(api, server.Op("participate", http.MethodPost, "/events/{eventId}/participations", "Participate in an event", tagParticipation,
		server.Describe("Accepts the caller's participation at once and answers 202 with a requestId; a queue and workers decide the outcome. "+
			"A repeated participation by the same user answers 202 with the original requestId and isDuplicate=true, "+
			"also when a new one would now be refused for the event's state (closed, a lottery past its cutoff) or its human check (a token already used, none, the provider down): "+
			"such a refusal reads the user's idempotency lock first (one read), so a client whose 202 was lost retries with the same body and gets its requestId. "+
			"The event's rate limit (429) is applied before that read. "+
			"The user is the token's subject; the body, if any, carries only humanToken. "+
			"An event whose humanCheck.required is true needs humanToken, a challenge provider's token verified before anything is written: "+
			"422 human-token-missing without it, 422 human-check-failed when the provider does not pass it, "+
			"and, when the provider cannot be reached, 503 human-check-unavailable (onUnavailable refuse) or 202 with humanCheck admitted-unverified (onUnavailable admit). "+
			"Fairness (FIRST_COME): the request's position is (queuedAt, requestId); on an event with ordering arrival the seats go to exactly the first N positions, "+
			"and the request shows uiPhase ALLOCATING until the in-order allocation decides it; with ordering delivery they go in the order the queue delivers."),
		server.Status(http.StatusAccepted), server.MaxBody(smallBody),
		server.Fails(http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusServiceUnavailable)),
		server.Handle(server.Caller, h.problem, func(ctx context.Context, p auth.Principal, in *participateInput) (*acceptedOutput, error) {
			res, err := h.ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: in.EventID, UserID: p.UserID,
				HumanToken: in.Body.humanToken(), ClientAddr: server.ClientIPFrom(ctx)})
			return &acceptedOutput{Body: Accepted{RequestID: res.RequestID, IsDuplicate: res.IsDuplicate, HumanCheck: res.HumanCheck}}, err
		}))

	poll := server.Op("get-request", http.MethodGet, "/requests/{requestId}", "Get a participation request", tagParticipation,
		server.Describe("The owner (or an admin) sees the request's status, UI phase and result, timeline, and delays. To anyone else the request does not exist (404). "+
			"While undecided, the answer shows the request's place (PlaceView: its approximate place in line, the seats left and the expected wait; "+
			"for a lottery the entries and the odds), measured about once a second. "+
			"While its decision cannot come yet (an arrival candidate is decided no sooner than MaxLateness after its queuedAt), the answer carries Retry-After: "+
			"poll again after it for the decision (the place may move sooner). "+
			"Every answer carries an ETag: send it back as If-None-Match and the answer is 304, with no body, while nothing it shows has changed; "+
			"before the Retry-After has passed that answer costs no table read."),
		server.Fails(http.StatusNotFound, http.StatusTooManyRequests))
	poll.Responses = map[string]*huma.Response{"304": {Description: "Not modified: the request reads as the ETag sent in If-None-Match says (the answer carries the ETag and Retry-After again)."}}
	huma.Register(api, poll, server.Handle(server.Caller, h.problem, h.poll))
	huma.Register(api, server.Op("my-participations", http.MethodGet, "/me/participations", "List my participations, newest first", tagParticipation,
		server.Describe("Newest first: requests appear once queued, by queuedAt; one whose enqueue failed (FAILED_FINAL / FAILED_INGEST_ENQUEUE) appears at once, by its requestedAt, and moves to its new queuedAt if an operator re-queues it. A page costs one read."), server.Fails(http.StatusBadRequest)),
		server.Handle(server.Caller, h.problem, func(ctx context.Context, p auth.Principal, in *server.PageQuery) (*pageOutput, error) {
			page, err := h.query.MyRequests(ctx, p.UserID, in.Limit, in.Cursor)
			return &pageOutput{Body: RequestPage{Items: viewsOf(page.Requests, false), Cursor: page.Cursor}}, err
		}))
}
