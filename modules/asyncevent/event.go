package asyncevent

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on event settings.
const (
	MaxCapacity = 1_000_000
	MaxWinners  = 100_000
	// MaxTime bounds every time setting: 9999-12-31T23:59:59.999Z in epoch
	// milliseconds, so that adding a grace or a TTL cannot overflow.
	MaxTime = 253_402_300_799_999
	// MaxIndexShards bounds IndexShards: a sharded event index is read
	// back by merging one query per shard, at most ddb.MaxMergeStreams.
	MaxIndexShards = 32
)

// NewEvent is what an admin gives to create an event. Times are epoch
// milliseconds.
type NewEvent struct {
	EventID   string
	EventType EventType
	Title     string

	// FIRST_COME: Capacity is required (the seat count N, stored as
	// capacityTotal and so named by the API); OpensAt (default: now) and
	// ClosesAt (default: none) bound when participations are accepted.
	Capacity int64
	OpensAt  int64
	ClosesAt int64
	// Ordering (FIRST_COME) is how winners are picked: OrderArrival or
	// OrderDelivery (default DefaultOrdering).
	Ordering Ordering
	// IndexShards (FIRST_COME) is how many partitions the event's index
	// entries are written over (see EventConfig.IndexShards): 1..
	// MaxIndexShards, default 1: one partition per event, EVENT#<eventId>
	// (docs/asyncevent.md).
	IndexShards int
	// HumanCheck asks every participation for a challenge provider's token
	// (default: none; see HumanCheck).
	HumanCheck HumanCheck
	// Limits are the event's own rate limits (default: the deployment's
	// only; see EventLimits).
	Limits EventLimits

	// LOTTERY: LotteryCutoffAt (required, in the future) ends entries;
	// Winners is K; AnnouncedAt (default: the cutoff) is when results are
	// announced. SeedCommitment, if given, is hex(SHA-256(seed)) of a seed
	// the creator keeps and reveals to the draw; if empty, the server
	// generates the seed and publishes only its commitment until the draw.
	LotteryCutoffAt int64
	Winners         int
	AnnouncedAt     int64
	SeedCommitment  string
}

// CreateEvent creates an event: its EventConfig and, for FIRST_COME, its
// EventCapacity, atomically. ErrEventExists if the id is taken.
func (a *Admin) CreateEvent(ctx context.Context, in NewEvent) (*EventConfig, error) {
	now := a.now()
	cfg := &EventConfig{EventID: in.EventID, EventType: in.EventType, Title: in.Title, Status: EventOpen, CreatedAt: now, UpdatedAt: now}
	if !ValidID(in.EventID) {
		return nil, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	if !utf8.ValidString(in.Title) || strings.ContainsFunc(in.Title, unicode.IsControl) || strings.ContainsFunc(in.Title, bidiControl) {
		return nil, badEvent("title", "title must be UTF-8 without control characters (bidirectional ones included)")
	}
	if utf8.RuneCountInString(in.Title) > 200 { // characters (code points), as the schema's maxLength counts
		return nil, badEvent("title", "title longer than 200 characters")
	}
	for _, t := range []struct {
		name string
		at   int64
	}{{"opensAt", in.OpensAt}, {"closesAt", in.ClosesAt}, {"lotteryCutoffAt", in.LotteryCutoffAt}, {"announcedAt", in.AnnouncedAt}} {
		if t.at < 0 || t.at > MaxTime {
			return nil, badEvent(t.name, "%s must be 0..%d (epoch milliseconds up to the year 9999)", t.name, MaxTime)
		}
	}
	policy, err := in.HumanCheck.policy()
	if err != nil {
		return nil, err
	}
	cfg.HumanCheck = policy
	if err := in.Limits.check(); err != nil {
		return nil, err
	}
	cfg.AddressLimit = in.Limits.ParticipationsPerAddress
	switch in.EventType {
	case FirstCome:
		if err := in.firstCome(cfg, now); err != nil {
			return nil, err
		}
	case Lottery:
		if err := in.lottery(cfg, now); err != nil {
			return nil, err
		}
	default:
		return nil, badEvent("eventType", "eventType must be FIRST_COME or LOTTERY")
	}
	cfg.TTL = (cfg.EndsAt() + RequestTTL.Milliseconds()) / 1000
	if err := a.cfg.Events.CreateEvent(ctx, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// bidiControl reports whether r is an explicit bidirectional embedding,
// override or isolate (U+202A..U+202E, U+2066..U+2069): in a title shown
// on the participation page it would reorder the text around it.
func bidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// badEvent is the EventError of field, its reason formatted.
func badEvent(field, format string, args ...any) error {
	return &EventError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// firstCome checks a FIRST_COME event's settings at now, fills in their
// defaults (every event ends: see MaxEventLifetime) and sets them on cfg.
func (in NewEvent) firstCome(cfg *EventConfig, now int64) error {
	if in.Capacity < 1 || in.Capacity > MaxCapacity {
		return badEvent("capacityTotal", "capacityTotal must be 1..%d", MaxCapacity)
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"lotteryCutoffAt", in.LotteryCutoffAt != 0}, {"winners", in.Winners != 0}, {"announcedAt", in.AnnouncedAt != 0}, {"seedCommitment", in.SeedCommitment != ""}} {
		if f.set {
			return badEvent(f.name, "lottery settings on a FIRST_COME event")
		}
	}
	if in.ClosesAt != 0 && in.ClosesAt <= max(in.OpensAt, now) {
		return badEvent("closesAt", "closesAt must be after opensAt and now")
	}
	if in.Ordering == "" {
		in.Ordering = DefaultOrdering
	}
	if !in.Ordering.Valid() {
		return badEvent("ordering", "ordering must be %s or %s", OrderArrival, OrderDelivery)
	}
	if in.IndexShards == 0 {
		in.IndexShards = 1
	}
	if in.IndexShards < 1 || in.IndexShards > MaxIndexShards {
		return badEvent("indexShards", "indexShards must be 1..%d", MaxIndexShards)
	}
	if in.ClosesAt == 0 { // every event ends: see MaxEventLifetime
		in.ClosesAt = max(in.OpensAt, now) + MaxEventLifetime.Milliseconds()
	}
	cfg.CapacityTotal, cfg.OpensAt, cfg.ClosesAt, cfg.Ordering = in.Capacity, in.OpensAt, in.ClosesAt, in.Ordering
	if in.IndexShards > 1 {
		cfg.IndexShards = in.IndexShards
	}
	return nil
}

// lottery checks a LOTTERY event's settings at now, fills in their
// defaults and sets them on cfg, with the seed's commitment: the
// creator's, or that of a seed the server generates.
func (in NewEvent) lottery(cfg *EventConfig, now int64) error {
	if in.Capacity != 0 || in.ClosesAt != 0 {
		field := "capacityTotal"
		if in.Capacity == 0 {
			field = "closesAt"
		}
		return badEvent(field, "capacityTotal and closesAt are FIRST_COME settings; a lottery closes at lotteryCutoffAt")
	}
	if in.Ordering != "" {
		return badEvent("ordering", "ordering is a FIRST_COME setting")
	}
	if in.IndexShards != 0 {
		return badEvent("indexShards", "indexShards is a FIRST_COME setting")
	}
	if in.LotteryCutoffAt <= now {
		return badEvent("lotteryCutoffAt", "lotteryCutoffAt must be in the future")
	}
	if in.Winners < 1 || in.Winners > MaxWinners {
		return badEvent("winners", "winners must be 1..%d", MaxWinners)
	}
	if in.OpensAt != 0 && in.OpensAt >= in.LotteryCutoffAt {
		return badEvent("opensAt", "opensAt must be before lotteryCutoffAt")
	}
	if in.AnnouncedAt == 0 {
		in.AnnouncedAt = in.LotteryCutoffAt
	}
	if in.AnnouncedAt < in.LotteryCutoffAt {
		return badEvent("announcedAt", "announcedAt must not be before lotteryCutoffAt")
	}
	cfg.OpensAt, cfg.LotteryCutoffAt, cfg.Winners, cfg.AnnouncedAt = in.OpensAt, in.LotteryCutoffAt, in.Winners, in.AnnouncedAt
	if in.SeedCommitment != "" {
		if b, err := hex.DecodeString(in.SeedCommitment); err != nil || len(b) != 32 {
			return badEvent("seedCommitment", "seedCommitment must be 64 hex digits (SHA-256)")
		}
		cfg.SeedCommitment = in.SeedCommitment
	} else {
		cfg.Seed, cfg.SeedCommitment = NewSeed()
	}
	return nil
}

// CloseEvent stops a FIRST_COME event from taking participations before its
// capacity or ClosesAt would: OPEN → CLOSED. Requests already accepted are
// still processed. Closing a closed event returns it unchanged. A lottery
// closes at its cutoff and is finished by the draw, so closing one is
// ErrNotFirstCome. The event's locks then expire LockTTLAfter after the
// close rather than after its end (see Operations.ExpireLocks).
// Participations stop at once in the Ingest sharing this Admin's
// EventCache (a read in flight does not cache the old status) and within
// the cache's TTL in the other processes; see docs/asyncevent.md on the
// event cache.
func (a *Admin) CloseEvent(ctx context.Context, eventID string) (*EventConfig, error) {
	if !ValidID(eventID) {
		return nil, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	cfg, err := a.cfg.Events.GetEvent(ctx, eventID, true)
	if err != nil {
		return nil, err
	}
	if cfg.EventType != FirstCome {
		return nil, fmt.Errorf("%w: %s is a %s; it closes at lotteryCutoffAt", ErrNotFirstCome, eventID, cfg.EventType)
	}
	// Whatever happens next (closed already, perhaps by another process;
	// closed now; a write whose answer was lost), this process must not go
	// on with a cached OPEN copy.
	defer a.cfg.Cache.forget(eventID)
	if cfg.Status == EventClosed {
		return cfg, nil
	}
	now := a.now()
	// Its locks come down to the close + LockTTLAfter (ExpireLocks), from
	// its end + LockTTLAfter.
	job := &LockJob{EventID: eventID, LockTTL: (now + LockTTLAfter.Milliseconds()) / 1000, CreatedAt: now, TTL: cfg.TTL}
	err = a.cfg.Events.CloseEvent(ctx, eventID, now, job)
	var ese *EventStateError
	switch {
	case errors.As(err, &ese) && ese.Current != nil && ese.Current.Status == EventClosed:
		cfg = ese.Current // closed concurrently
	case err != nil:
		return nil, err
	default:
		cfg.Status, cfg.UpdatedAt = EventClosed, now
	}
	return cfg, nil
}

// GetEvent reads an event's config (strongly consistent). Callers showing
// it must hide Seed until it is revealed (EventConfig.RevealedSeed).
func (a *Admin) GetEvent(ctx context.Context, eventID string) (*EventConfig, error) {
	if !ValidID(eventID) {
		return nil, fmt.Errorf("%w: eventId", ErrInvalidID)
	}
	return a.cfg.Events.GetEvent(ctx, eventID, true)
}
