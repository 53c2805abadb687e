// Package ratelimit limits how fast one user, and one client address, may
// call a class of operations ("participate", "poll"): in-memory token
// buckets (golang.org/x/time/rate) in each API replica, each bucket a
// replica's share of a deployment-wide budget: the budget divided by the
// replicas running, counted live (Replicas: each replica beats in a small
// table) or fixed by the deployment. A request costs no AWS call: a
// refusal writes nothing. docs/ratelimit.md says how to set the budgets,
// the bound they hold to as the replicas scale, and what the edge (AWS
// WAF) adds.
package ratelimit

import (
	"math"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// By is what a bucket is keyed by.
type By string

// The keys a class is limited by.
const (
	ByUser    By = "user"
	ByAddress By = "address"
	// ByEventAddress keys an event's own budget by the event and the
	// client address (AllowRule).
	ByEventAddress By = "event_address"
)

// Rule is a deployment-wide budget: Rate calls a second, in bursts of up
// to Burst. The zero Rule is no limit.
type Rule struct {
	Rate  float64
	Burst int
}

// Config configures a Limiter.
type Config struct {
	// Rules are the budgets per class and key; a class or key without
	// one is not limited.
	Rules map[string]map[By]Rule
	// Replicas is how many API replicas share each budget (at least 1):
	// each replica's bucket gets 1/Replicas of it. Count, if set, is the
	// live count instead (Replicas.Count): a bucket's share follows it.
	Replicas int
	Count    func() int
	// MaxBuckets bounds the buckets kept (default 100,000); past it, the
	// buckets idle longest are dropped first (a dropped bucket starts
	// full again: the limit fails open, never closed).
	MaxBuckets int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Refused, if set, hears each refusal (for metrics).
	Refused func(class string, by By)
}

// Limiter holds the buckets. It is safe for concurrent use.
type Limiter struct {
	cfg Config

	mu      sync.Mutex
	buckets map[bucketKey]*bucket
}

type bucketKey struct {
	class string
	by    By
	id    string
}

type bucket struct {
	lim  *rate.Limiter
	rule Rule
	n    int // the replicas its share is of
	seen time.Time
}

// New returns a Limiter.
func New(cfg Config) *Limiter {
	cfg.Replicas = max(cfg.Replicas, 1)
	if cfg.MaxBuckets <= 0 {
		cfg.MaxBuckets = 100_000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Limiter{cfg: cfg, buckets: map[bucketKey]*bucket{}}
}

// Limits reports whether class has any budget.
func (l *Limiter) Limits(class string) bool { return len(l.cfg.Rules[class]) > 0 }

// Allow takes a token from class's buckets of user and of addr (either
// may be empty: not limited by it). It returns ok, or how long until the
// call would be allowed; a refused call takes no token from either.
func (l *Limiter) Allow(class, user, addr string) (ok bool, retryAfter time.Duration) {
	now := l.cfg.Now()
	var taken []*rate.Reservation
	for _, k := range []bucketKey{{class, ByUser, user}, {class, ByAddress, addr}} {
		if k.id == "" {
			continue
		}
		b := l.bucket(k, l.cfg.Rules[k.class][k.by], now)
		if b == nil {
			continue
		}
		r, d := reserve(b, now)
		if r == nil {
			for _, t := range taken {
				t.CancelAt(now)
			}
			l.refused(class, k.by)
			return false, d
		}
		taken = append(taken, r)
	}
	return true, 0
}

// AllowRule takes a token from the bucket of class, by and id, whose
// budget is rule (deployment-wide, like Config.Rules'; the zero Rule
// allows everything): for budgets that are not the deployment's, such as
// an event's own. It returns ok, or how long until the call would be
// allowed; a refused call takes no token. A bucket keeps the rule it was
// made with, so a key's rule must not change.
func (l *Limiter) AllowRule(class string, by By, id string, rule Rule) (ok bool, retryAfter time.Duration) {
	now := l.cfg.Now()
	b := l.bucket(bucketKey{class, by, id}, rule, now)
	if b == nil {
		return true, 0
	}
	if r, d := reserve(b, now); r == nil {
		l.refused(class, by)
		return false, d
	}
	return true, 0
}

// reserve takes a token from b at now: its reservation, or nil and how
// long until one would be available (a minute if never: a burst of 0).
func reserve(b *bucket, now time.Time) (*rate.Reservation, time.Duration) {
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); !r.OK() || d > 0 {
		r.CancelAt(now)
		if !r.OK() {
			d = time.Minute
		}
		return nil, d
	}
	return r, 0
}

// refused tells Config.Refused of a refusal.
func (l *Limiter) refused(class string, by By) {
	if l.cfg.Refused != nil {
		l.cfg.Refused(class, by)
	}
}

// bucket returns k's bucket, made with rule when first seen; nil if rule
// is no budget.
func (l *Limiter) bucket(k bucketKey, rule Rule, now time.Time) *bucket {
	if rule.Rate <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.cfg.Replicas
	if l.cfg.Count != nil {
		n = max(l.cfg.Count(), 1)
	}
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= l.cfg.MaxBuckets {
			l.evict(now)
		}
		b = &bucket{lim: rate.NewLimiter(share(rule, n)), rule: rule, n: n}
		l.buckets[k] = b
	} else if b.n != n { // the replicas changed: the bucket takes its new share
		r, burst := share(b.rule, n)
		b.lim.SetLimitAt(now, r)
		b.lim.SetBurstAt(now, burst)
		b.n = n
	}
	b.seen = now
	return b
}

// share is one of n replicas' share of rule: its rate and burst (at
// least 1, so a budget smaller than the replicas still lets a call
// through somewhere).
func share(rule Rule, n int) (rate.Limit, int) {
	return rate.Limit(rule.Rate / float64(n)), max(1, int(math.Ceil(float64(rule.Burst)/float64(n))))
}

// evict drops the buckets that are full again (they limit nothing until
// used), or, if none is, the half idle longest.
func (l *Limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.lim.TokensAt(now) >= float64(b.lim.Burst()) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.cfg.MaxBuckets {
		return
	}
	var cut time.Time
	seen := make([]time.Time, 0, len(l.buckets))
	for _, b := range l.buckets {
		seen = append(seen, b.seen)
	}
	cut = median(seen)
	for k, b := range l.buckets {
		if !b.seen.After(cut) {
			delete(l.buckets, k)
		}
	}
}

// median is the middle of ts (which it sorts).
func median(ts []time.Time) time.Time {
	slices.SortFunc(ts, time.Time.Compare)
	return ts[len(ts)/2]
}
