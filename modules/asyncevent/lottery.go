package asyncevent

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// SeedBytes is the length of a generated draw seed.
const SeedBytes = 32

// NewSeed returns a random hex seed and its commitment hex(SHA-256(seed)).
func NewSeed() (seed, commitment string) {
	b := make([]byte, SeedBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b), Commit(b)
}

// Commit returns hex(SHA-256(seed)), the commitment published before the
// draw.
func Commit(seed []byte) string {
	h := sha256.Sum256(seed)
	return hex.EncodeToString(h[:])
}

// Ticket is one entry's place in a draw.
type Ticket struct {
	RequestID string
	// Hash is SHA-256(seed || requestId).
	Hash [32]byte
}

// Rank orders lottery entries for a draw: by SHA-256(seed || requestId)
// ascending (bytes compared as unsigned, i.e. like their hex strings), ties
// broken by requestId. The first K are the winners. seed is the raw seed
// (the hex-decoded revealed seed); requestId is its ASCII bytes.
func Rank(seed []byte, requestIDs []string) []Ticket {
	ts := make([]Ticket, len(requestIDs))
	for i, id := range requestIDs {
		h := sha256.New()
		h.Write(seed)
		h.Write([]byte(id))
		ts[i].RequestID = id
		copy(ts[i].Hash[:], h.Sum(nil))
	}
	sort.Slice(ts, func(i, j int) bool {
		if c := bytes.Compare(ts[i].Hash[:], ts[j].Hash[:]); c != 0 {
			return c < 0
		}
		return ts[i].RequestID < ts[j].RequestID
	})
	return ts
}

// DrawResult is the outcome of a lottery draw.
type DrawResult struct {
	EventID        string
	Seed           string // hex, revealed
	SeedCommitment string // hex(SHA-256(seed))
	Entries        int
	// Winners are the winning requestIds in rank order.
	Winners []string
	DrawnAt int64
}

// Draw runs a LOTTERY event's draw. It may start once lotteryCutoffAt +
// AdminConfig.DrawGrace has passed and no entry is still waiting to be
// processed (*PendingError otherwise). It is idempotent and resumable:
// calling it again, after a crash or after it finished, gives the same
// winners, because the entry set is frozen when the event moves to DRAWING
// and the ranking depends only on the seed and the requestIds.
//
// seed is needed only when the event was created with a caller-supplied
// commitment; it must hash to that commitment. For a server-generated seed
// it may be empty (or must equal the stored seed).
func (a *Admin) Draw(ctx context.Context, eventID, seed string) (*DrawResult, error) {
	if !ValidID(eventID) {
		return nil, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	cfg, err := a.cfg.Events.GetEvent(ctx, eventID, true)
	if err != nil {
		return nil, err
	}
	if cfg.EventType != Lottery {
		return nil, fmt.Errorf("%w: %s is %s", ErrNotLottery, eventID, cfg.EventType)
	}
	switch cfg.Status {
	case EventOpen:
		if err := a.startDraw(ctx, cfg, seed); err != nil {
			return nil, err
		}
	case EventDrawing, EventAnnounced:
		if seed != "" && seed != cfg.Seed {
			return nil, fmt.Errorf("%w: the draw already used another seed", ErrSeed)
		}
	default:
		return nil, fmt.Errorf("%w: event %s is %s", ErrEventClosed, eventID, cfg.Status)
	}
	seedBytes, err := hex.DecodeString(cfg.Seed)
	if err != nil || Commit(seedBytes) != cfg.SeedCommitment {
		// Not the caller's seed: the stored data disagrees with itself.
		return nil, fmt.Errorf("asyncevent: event %s: the stored seed does not match its stored commitment", eventID)
	}

	// The entries: every request that reached COLLECTING. After the event
	// left OPEN no request can newly become one, so the set is frozen.
	ids, state, err := a.entries(ctx, eventID)
	if err != nil {
		return nil, err
	}
	ranked := Rank(seedBytes, ids)
	k := min(cfg.Winners, len(ranked))
	res := &DrawResult{EventID: eventID, Seed: cfg.Seed, SeedCommitment: cfg.SeedCommitment, Entries: len(ranked), DrawnAt: cfg.DrawnAt}
	for _, t := range ranked[:k] {
		res.Winners = append(res.Winners, t.RequestID)
	}
	if cfg.Status == EventAnnounced {
		return res, nil
	}

	// Phase DRAWING for everyone still collecting, then the results.
	err = a.each(ctx, ranked, func(ctx context.Context, _ int, t Ticket) error {
		return a.setDrawing(ctx, state[t.RequestID])
	})
	if err != nil {
		return nil, fmt.Errorf("%w: draw: %v", ErrUnavailable, err)
	}
	err = a.each(ctx, ranked, func(ctx context.Context, i int, t Ticket) error {
		return a.announce(ctx, eventID, state[t.RequestID], t, i, i < k)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: draw: %v", ErrUnavailable, err)
	}
	now := a.now()
	err = a.cfg.Events.MoveEvent(ctx, EventMove{EventID: eventID, From: EventDrawing, To: EventAnnounced, Set: map[string]any{
		"drawnAt": now, "drawEntries": len(ranked), "drawWinners": k, "updatedAt": now,
	}})
	var ese *EventStateError
	if errors.As(err, &ese) && ese.Current != nil && ese.Current.Status == EventAnnounced {
		now, err = ese.Current.DrawnAt, nil
	}
	if err != nil {
		return nil, err
	}
	a.cfg.Cache.forget(eventID)
	res.DrawnAt = now
	return res, nil
}

// setDrawing moves the entry r from phase COLLECTING to
// DRAWING, unless it has moved on already.
func (a *Admin) setDrawing(ctx context.Context, r *Request) error {
	if r.Status != StatusProcessing || r.UIPhase != PhaseCollecting {
		return nil
	}
	err := a.cfg.Draw.SetPhase(ctx, r.RequestID, PhaseCollecting, PhaseDrawing)
	var se *StateError
	if errors.As(err, &se) {
		return nil // moved on already (a concurrent or earlier draw)
	}
	return err
}

// announce finishes r, the entry of ticket t ranked i (from 0) in event
// eventID's draw: SUCCEEDED if win, else REJECTED, with its ticket and
// rank. An entry finished already must agree with win.
func (a *Admin) announce(ctx context.Context, eventID string, r *Request, t Ticket, i int, win bool) error {
	if r.Status != StatusProcessing {
		if (r.ResultCode == CodeLotteryWin) != win {
			return fmt.Errorf("request %s has result %s, the draw says win=%v", r.RequestID, r.ResultCode, win)
		}
		return nil
	}
	now := max(a.now(), r.LastChange()+1)
	tr := &Transition{
		RequestID: r.RequestID, EventID: eventID, UserID: r.UserID,
		From: []Status{StatusProcessing}, To: StatusSucceeded, At: now, FinishedAt: now,
		UIPhase: PhaseAnnounced, UIResult: ResultSuccess, ResultCode: CodeLotteryWin,
		Ticket: hex.EncodeToString(t.Hash[:]), Rank: i + 1, Message: "lottery draw",
	}
	if !win {
		tr.To, tr.UIResult, tr.ResultCode = StatusRejected, ResultRejected, CodeRejectedLotteryLose
	}
	err := a.cfg.Draw.Transition(ctx, tr)
	var se *StateError
	if errors.As(err, &se) && se.Current != nil && se.Current.Status.Terminal() {
		if (se.Current.ResultCode == CodeLotteryWin) != win {
			return fmt.Errorf("request %s has result %s, the draw says win=%v", r.RequestID, se.Current.ResultCode, win)
		}
		return nil
	}
	return err
}

// entries reads the draw's entries from the event index. The index (GSI2)
// is eventually consistent on DynamoDB, so an entry admitted just before the
// draw started might not show yet: the entries are read until their number
// equals the EntryCount that was counted as each was admitted (frozen since
// the event left OPEN), or ErrUnavailable after AdminConfig.DrawIndexWait. The
// draw never ranks an incomplete set.
func (a *Admin) entries(ctx context.Context, eventID string) ([]string, map[string]*Request, error) {
	cfg, err := a.cfg.Events.GetEvent(ctx, eventID, true)
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(a.cfg.DrawIndexWait)
	pause := 50 * time.Millisecond
	for {
		var ids []string
		state := map[string]*Request{}
		for r, err := range a.cfg.Requests.AllEventRequests(ctx, eventID) {
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			if isEntry(r) {
				ids = append(ids, r.RequestID)
				state[r.RequestID] = r
			}
		}
		if int64(len(ids)) == cfg.EntryCount {
			return ids, state, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("%w: the event index shows %d entries, %d were admitted; call the draw again", ErrUnavailable, len(ids), cfg.EntryCount)
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// isEntry reports whether a request takes part in its event's draw.
func isEntry(r *Request) bool {
	switch {
	case r.Status == StatusProcessing:
		return r.UIPhase == PhaseCollecting || r.UIPhase == PhaseDrawing
	case r.ResultCode == CodeLotteryWin || r.ResultCode == CodeRejectedLotteryLose:
		return true
	}
	return false
}

// startDraw checks that the draw may start and moves the event OPEN →
// DRAWING, revealing the seed. cfg is updated.
func (a *Admin) startDraw(ctx context.Context, cfg *EventConfig, seed string) error {
	now := a.now()
	if now < cfg.LotteryCutoffAt+a.cfg.DrawGrace.Milliseconds() {
		return fmt.Errorf("%w: entries close at %d; the draw may start %s later", ErrDrawTooEarly, cfg.LotteryCutoffAt, a.cfg.DrawGrace)
	}
	switch {
	case cfg.Seed == "" && seed == "":
		return fmt.Errorf("%w: this event's seed was committed by its creator; reveal it to draw", ErrSeed)
	case cfg.Seed == "":
		b, err := hex.DecodeString(seed)
		if err != nil || Commit(b) != cfg.SeedCommitment {
			return fmt.Errorf("%w: SHA-256(seed) must equal %s", ErrSeed, cfg.SeedCommitment)
		}
	case seed != "" && seed != cfg.Seed:
		return fmt.Errorf("%w: not the committed seed", ErrSeed)
	default:
		seed = cfg.Seed
	}
	pending := 0
	for r, err := range a.cfg.Requests.AllEventRequests(ctx, cfg.EventID) {
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if r.Status == StatusReceived || r.Status == StatusQueued {
			pending++
		}
	}
	// Requests still RECEIVED are not queued yet (the pending index holds
	// them). They were admitted before the cutoff, so they must be entries:
	// the draw waits for them (the sweep heals stranded ones) rather than
	// reject them as late.
	received := 0
	for r, err := range a.cfg.Requests.PendingRequests(ctx, cfg.EventID) {
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if r.Status == StatusReceived {
			received++
		}
	}
	if pending+received > 0 {
		return &PendingError{Pending: pending + received, Received: received}
	}
	err := a.cfg.Events.MoveEvent(ctx, EventMove{EventID: cfg.EventID, From: EventOpen, To: EventDrawing, Set: map[string]any{
		"drawStartedAt": now, "seed": seed, "updatedAt": now,
	}})
	var ese *EventStateError
	switch {
	case err == nil:
		cfg.Status, cfg.Seed, cfg.DrawStartedAt = EventDrawing, seed, now
	case errors.As(err, &ese) && ese.Current != nil && (ese.Current.Status == EventDrawing || ese.Current.Status == EventAnnounced):
		*cfg = *ese.Current // a concurrent draw started it
	default:
		return err
	}
	a.cfg.Cache.forget(cfg.EventID)
	return nil
}

// each runs f over ranked with bounded concurrency, returning the first
// error.
func (a *Admin) each(ctx context.Context, ranked []Ticket, f func(context.Context, int, Ticket) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, a.cfg.DrawConcurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i, t := range ranked {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(ctx, i, t); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}
