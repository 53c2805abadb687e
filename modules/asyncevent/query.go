package asyncevent

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"
)

// Caller is who asks: the verified user id and whether they are an admin.
type Caller struct {
	UserID string
	Admin  bool
}

// GetRequest returns a request to its owner or an admin. To anyone else it
// is ErrRequestNotFound, so request ids cannot be probed. It only reads
// (one GetItem): a poll is safe and costs what docs/capacity.md says.
//
// A request still RECEIVED Config.RequeueAfter after it was requested has
// been stranded: its ingest died before the send, or the send and marking
// it failed both failed (the client got a 503, and its retry only returns
// this id as a duplicate). SweepStranded, which every worker runs, enqueues
// it again; reading it does not.
func (s *Service) GetRequest(ctx context.Context, c Caller, requestID string) (*Request, error) {
	if !ValidID(requestID) {
		return nil, fmt.Errorf("%w: requestId", ErrInvalidID)
	}
	r, err := s.store.GetRequest(ctx, requestID)
	if err != nil {
		return nil, err
	}
	if !c.Admin && r.UserID != c.UserID {
		return nil, ErrRequestNotFound
	}
	return r, nil
}

// SweepResult reports a sweep for stranded requests.
type SweepResult struct {
	Stranded int `json:"stranded" doc:"Requests found RECEIVED for longer than RequeueAfter"`
	Requeued int `json:"requeued" doc:"Of those, requests this sweep enqueued again"`
	// FailedEnqueue counts the requests whose enqueue failed at ingest
	// (FAILED_FINAL / FAILED_INGEST_ENQUEUE): re-queueing them is left to
	// an operator (SweepOptions.RequeueFailedEnqueue, or
	// RequeueFailed for one request).
	FailedEnqueue         int `json:"failedEnqueue" doc:"Requests FAILED_FINAL / FAILED_INGEST_ENQUEUE (their enqueue failed at ingest)"`
	FailedEnqueueRequeued int `json:"failedEnqueueRequeued" doc:"Of those, requests this sweep re-queued (only with failedEnqueue=requeue)"`
}

// DefaultSweepLookback is Config.SweepLookback's default.
const DefaultSweepLookback = 24 * time.Hour

// SweepOptions configures SweepStranded.
type SweepOptions struct {
	// Lookback is how far back to look for requests, by their requestedAt
	// (0: Config.SweepLookback; at most RequestTTL, which is every request
	// there is). The store reads by UTC day, so a sweep reads from the
	// start of the day Lookback ago. A periodic sweep (every worker runs
	// one) heals what was stranded since its last run; a longer lookback
	// is for an operator's sweep after an outage longer than the default,
	// or to count and re-queue older failed enqueues.
	Lookback time.Duration
	// RequeueFailedEnqueue also re-queues every FAILED_INGEST_ENQUEUE
	// request (see RequeueFailed), an operator's decision once the queue
	// is healthy again.
	RequeueFailedEnqueue bool
}

// SweepStranded finds every request stranded in RECEIVED (see GetRequest)
// and enqueues it again, at most once per RequeueAfter (a conditional
// requeuedAt); the worker takes RECEIVED requests, and a message that was
// in fact still on its way is harmless: the worker is idempotent. In the
// same pass it counts the requests whose enqueue failed at ingest and, if
// opt says so, re-queues them. It looks at requests made within
// opt.Lookback, which the store finds without reading the whole table (on
// DynamoDB, Queries of the pending index: PendingShards per day looked
// back over), so every worker runs it periodically, and an operator
// through the admin API's POST /admin/requests/sweep. It is safe to run concurrently with itself and with reads: each
// stranded request is requeued at most once per RequeueAfter, and each
// failed one once. If re-sending a failed request fails again, the sweep
// stops re-queueing them (and keeps counting): run it again once the queue
// is healthy.
func (s *Service) SweepStranded(ctx context.Context, opt SweepOptions) (SweepResult, error) {
	var res SweepResult
	if s.queue == nil || s.cfg.RequeueAfter <= 0 {
		return res, fmt.Errorf("%w: requeueing is off", ErrUnavailable)
	}
	lookback := s.cfg.SweepLookback
	if opt.Lookback > 0 {
		lookback = min(opt.Lookback, RequestTTL)
	}
	now := s.now()
	before := now - s.cfg.RequeueAfter.Milliseconds()
	sendFailing := false
	for r, err := range s.store.SweepCandidates(ctx, before, now-lookback.Milliseconds()) {
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if r.Status == StatusFailedFinal {
			res.FailedEnqueue++
			if !opt.RequeueFailedEnqueue || sendFailing {
				continue
			}
			after, err := s.RequeueFailed(ctx, r.RequestID)
			switch {
			case err == nil && FailedEnqueue(after.Status, after.ResultCode):
				// The queue still refuses: stop re-queueing (counting on).
				// (Only the re-send fails it so: a worker that already
				// failed the re-queued request sets another code.)
				sendFailing = true
			case err == nil:
				res.FailedEnqueueRequeued++
			case errors.Is(err, ErrNotRequeueable), errors.Is(err, ErrRequestNotFound):
				// re-queued meanwhile, a lottery past its draw, or expired
			default:
				return res, err
			}
			continue
		}
		res.Stranded++
		sent, err := s.requeueStranded(ctx, r)
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if sent {
			res.Requeued++
		}
	}
	return res, nil
}

// RequeueFailed re-queues a request whose enqueue failed at ingest
// (FAILED_FINAL / FAILED_INGEST_ENQUEUE), which is an operator's
// decision: the request goes back to RECEIVED (failure fields cleared,
// requeuedAt set, logged), its message is sent, and it becomes QUEUED with
// the re-queue time as its queuedAt. If the send fails again it is
// FAILED_FINAL again.
// Any other request, or a lottery entry once the draw has started, is
// ErrNotRequeueable. Of concurrent calls that read the same failure, one
// re-queues it and the others get ErrNotRequeueable. It returns the request
// as it is afterwards: FAILED_FINAL / FAILED_INGEST_ENQUEUE again if the
// send failed again; once sent, a worker may already have moved it on
// (even to FAILED_FINAL with another result code).
func (s *Service) RequeueFailed(ctx context.Context, requestID string) (*Request, error) {
	if !ValidID(requestID) {
		return nil, fmt.Errorf("%w: requestId", ErrInvalidID)
	}
	if s.queue == nil {
		return nil, fmt.Errorf("%w: no queue configured", ErrUnavailable)
	}
	r, err := s.store.GetRequest(ctx, requestID)
	if err != nil {
		return nil, err
	}
	if !FailedEnqueue(r.Status, r.ResultCode) {
		return nil, fmt.Errorf("%w: %s is %s/%s", ErrNotRequeueable, requestID, r.Status, r.ResultCode)
	}
	// After the draw started a re-queued lottery entry could only be
	// rejected as late, though it was admitted before the cutoff: the
	// reopen is conditional on the lottery being OPEN, in its transaction,
	// so that a draw starting meanwhile wins.
	openEvent := ""
	if r.EventType == Lottery {
		openEvent = r.EventID
	}
	at := max(s.now(), r.FinishedAt+1) // its logs stay in order
	err = s.store.ReopenFailedEnqueue(ctx, requestID, r.FinishedAt, at, openEvent)
	var se *StateError
	var ese *EventStateError
	switch {
	case errors.As(err, &se):
		return nil, fmt.Errorf("%w: %s changed meanwhile", ErrNotRequeueable, requestID)
	case errors.As(err, &ese) && ese.Current != nil:
		return nil, fmt.Errorf("%w: the lottery %s is %s; re-queue entries before the draw", ErrNotRequeueable, r.EventID, ese.Current.Status)
	case errors.As(err, &ese):
		return nil, ese // the event does not exist: ErrEventNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	s.cfg.Log.Info("asyncevent: operator re-queued a request whose enqueue had failed", "requestId", requestID)
	shards := 0
	if r.EventType == FirstCome {
		cfg, err := s.event(ctx, r.EventID)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		shards = cfg.IndexShards
	}
	if err := s.enqueue(ctx, r, at+1, shards); err != nil {
		return nil, err
	}
	return s.store.GetRequest(ctx, requestID)
}

// requeueStranded enqueues r again if it has been RECEIVED for
// RequeueAfter and was not requeued within it (see SweepStranded). It reports
// whether it sent a message.
func (s *Service) requeueStranded(ctx context.Context, r *Request) (bool, error) {
	if r.Status != StatusReceived || s.queue == nil || s.cfg.RequeueAfter <= 0 {
		return false, nil
	}
	now := s.now()
	before := now - s.cfg.RequeueAfter.Milliseconds()
	if r.RequestedAt >= before || r.RequeuedAt >= before {
		return false, nil
	}
	err := s.store.MarkRequeued(ctx, r.RequestID, now, before)
	var se *StateError
	if errors.As(err, &se) {
		return false, nil // moved on, or another sweep requeued it
	}
	if err == nil {
		err = s.queue.Send(ctx, Message{RequestID: r.RequestID, EventID: r.EventID, UserID: r.UserID, EventType: r.EventType}.Encode())
	}
	if err != nil {
		return false, err
	}
	s.cfg.Log.Warn("asyncevent: requeued a request stranded in RECEIVED", "requestId", r.RequestID, "requestedAt", r.RequestedAt)
	return true, nil
}

// Page is one page of requests; Cursor is empty on the last page.
type Page struct {
	Requests []*Request
	Cursor   string
}

// MaxLimit bounds page sizes.
const MaxLimit = 100

func checkLimit(limit int) error {
	if limit < 1 || limit > MaxLimit {
		return fmt.Errorf("%w: limit must be 1..%d", ErrInvalidEvent, MaxLimit)
	}
	return nil
}

// MyRequests lists a user's requests, newest first (GSI1). Requests appear
// once they are queued.
func (s *Service) MyRequests(ctx context.Context, userID string, limit int, cursor string) (Page, error) {
	if !ValidUserID(userID) {
		return Page{}, fmt.Errorf("%w: userId", ErrInvalidID)
	}
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	rs, next, err := s.store.UserRequests(ctx, userID, limit, cursor)
	return Page{Requests: rs, Cursor: next}, err
}

// EventRequests lists an event's requests, newest first (GSI2), keeping
// only status when it is not "" (filtered on the server: the status is kept
// out of the index keys, so a request keeps its place in the list as its
// status changes).
func (s *Service) EventRequests(ctx context.Context, eventID string, status Status, limit int, cursor string) (Page, error) {
	if !ValidID(eventID) {
		return Page{}, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	if err := checkLimit(limit); err != nil {
		return Page{}, err
	}
	// An unknown event is ErrEventNotFound, as for its stats, not an empty
	// list (the config is usually cached: no extra call).
	if _, err := s.event(ctx, eventID); err != nil {
		return Page{}, err
	}
	rs, next, err := s.store.EventRequests(ctx, eventID, status, limit, cursor)
	return Page{Requests: rs, Cursor: next}, err
}

// Logs returns a request's status log, oldest first.
func (s *Service) Logs(ctx context.Context, requestID string) ([]*StatusLog, error) {
	if !ValidID(requestID) {
		return nil, fmt.Errorf("%w: requestId", ErrInvalidID)
	}
	logs, err := s.store.Logs(ctx, requestID)
	if err == nil && len(logs) == 0 {
		return nil, ErrRequestNotFound
	}
	return logs, err
}

// Stats are an event's counts, computed on the server from its queued
// requests (GSI2) and those not queued (RECEIVED and failed enqueues, see
// RequestReader.PendingRequests).
type Stats struct {
	EventID   string
	EventType EventType
	// Total counts the event's requests in every status.
	Total        int
	ByStatus     map[Status]int
	ByResultCode map[ResultCode]int
	// FIRST_COME capacity; InvariantOK says capacityTotal −
	// capacityRemaining == #SUCCEEDED.
	CapacityTotal     int64
	CapacityRemaining int64
	InvariantOK       bool
}

// pendingRequests is the store's PendingRequests of eventID if read, else
// nothing (and no call).
func (s *Service) pendingRequests(ctx context.Context, eventID string, read bool) iter.Seq2[*Request, error] {
	if !read {
		return func(func(*Request, error) bool) {}
	}
	return s.store.PendingRequests(ctx, eventID)
}

// statsAttempts bounds the reads EventStats makes of an event whose
// invariant does not hold, before it says so.
const statsAttempts = 4

// EventStats counts an event's requests by status and result code and, for
// FIRST_COME, checks capacityTotal − capacityRemaining == #SUCCEEDED.
//
// The requests and the capacity item are separate reads: a decision that
// takes a seat between them, or one the event index (GSI2) does not show
// yet, makes a sound event look broken. So when the invariant does not
// hold, both are read again after the index lag (at least 100 ms), up to
// statsAttempts reads in all. A broken invariant stays broken; a transient
// one does not raise a false alarm.
func (s *Service) EventStats(ctx context.Context, eventID string) (*Stats, error) {
	cfg, err := s.GetEvent(ctx, eventID)
	if err != nil {
		return nil, err
	}
	return s.eventStats(ctx, cfg, true)
}

// eventStats is EventStats of the event cfg configures; without pending,
// it counts only the queued requests (all the capacity invariant needs: a
// SUCCEEDED request is queued), sparing the pending index's Queries.
func (s *Service) eventStats(ctx context.Context, cfg *EventConfig, pending bool) (*Stats, error) {
	eventID := cfg.EventID
	for attempt := 1; ; attempt++ {
		st := &Stats{EventID: eventID, EventType: cfg.EventType, ByStatus: map[Status]int{}, ByResultCode: map[ResultCode]int{}, InvariantOK: true}
		// A request queued while it is read can be in both parts (the
		// indexes lag): counted once.
		queued := map[string]bool{}
		count := func(r *Request) {
			st.Total++
			st.ByStatus[r.Status]++
			if r.ResultCode != "" {
				st.ByResultCode[r.ResultCode]++
			}
		}
		for r, err := range s.store.AllEventRequests(ctx, eventID) {
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			queued[r.RequestID] = true
			count(r)
		}
		for r, err := range s.pendingRequests(ctx, eventID, pending) {
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			if !queued[r.RequestID] {
				count(r)
			}
		}
		if cfg.EventType != FirstCome {
			return st, nil
		}
		c, err := s.store.GetCapacity(ctx, eventID)
		if err != nil {
			return nil, err
		}
		st.CapacityTotal, st.CapacityRemaining = c.CapacityTotal, c.CapacityRemaining
		st.InvariantOK = c.CapacityTotal-c.CapacityRemaining == int64(st.ByStatus[StatusSucceeded])
		if st.InvariantOK || attempt == statsAttempts {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(max(s.cfg.IndexLag, 100*time.Millisecond)):
		}
	}
}
