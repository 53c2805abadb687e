package asyncevent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Budget is a rate budget as people write it: "N/s", "N/m" or "N/h", N
// calls per second, minute or hour with a whole unit's worth usable at
// once; "" is no budget. docs/ratelimit.md, Per event.
type Budget string

// MaxBudgetCount bounds a Budget's N.
const MaxBudgetCount = 1_000_000

// Parse returns b's count and period; (0, 0, nil) for "".
func (b Budget) Parse() (count int, per time.Duration, err error) {
	if b == "" {
		return 0, 0, nil
	}
	n, unit, ok := strings.Cut(string(b), "/")
	count, cerr := strconv.Atoi(n)
	switch unit {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	}
	if !ok || cerr != nil || count < 1 || count > MaxBudgetCount || per == 0 || n != strconv.Itoa(count) {
		return 0, 0, fmt.Errorf("budget %q: want N/s, N/m or N/h with N 1..%d", string(b), MaxBudgetCount)
	}
	return count, per, nil
}

// EventLimits are an event's own rate limits (NewEvent.Limits), fixed at
// creation, applied on top of the deployment's (docs/ratelimit.md).
type EventLimits struct {
	// ParticipationsPerAddress is how many participations in this event
	// one client address may make ("" : only the deployment's limits).
	// It suits an event whose audience is known: a local race's few
	// hundred runners need far less than a city's marathon.
	ParticipationsPerAddress Budget
}

// check validates l for an event's creation.
func (l EventLimits) check() error {
	if _, _, err := l.ParticipationsPerAddress.Parse(); err != nil {
		return badEvent("limits.participationsPerAddress", "limits.participationsPerAddress: %v", err)
	}
	return nil
}

// EventLimiter applies events' own budgets (IngestConfig.Limiter): Allow
// takes one call of event's budget b from the client address addr, or
// says how long until one would be allowed. It keeps its state in memory
// (a refusal costs no AWS call).
type EventLimiter interface {
	AllowParticipation(eventID, addr string, b Budget) (ok bool, retryAfter time.Duration)
}

// ErrRateLimited: the participation is past its event's budget
// (RateLimitedError says for how long).
var ErrRateLimited = errors.New("asyncevent: too many participations in this event from this client address")

// RateLimitedError is ErrRateLimited with the time until a participation
// would be allowed.
type RateLimitedError struct{ RetryAfter time.Duration }

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("%v: retry in %v", ErrRateLimited, e.RetryAfter.Round(time.Second))
}

// Is makes errors.Is(err, ErrRateLimited) hold.
func (e *RateLimitedError) Is(target error) bool { return target == ErrRateLimited }

// checkLimits applies cfg's own budgets to a participation from addr: nil
// when allowed, or there is no budget, limiter or known address.
func (in *Ingest) checkLimits(cfg *EventConfig, addr string) error {
	if cfg.AddressLimit == "" || in.cfg.Limiter == nil || addr == "" {
		return nil
	}
	if ok, after := in.cfg.Limiter.AllowParticipation(cfg.EventID, addr, cfg.AddressLimit); !ok {
		return &RateLimitedError{RetryAfter: after}
	}
	return nil
}
