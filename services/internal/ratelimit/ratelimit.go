// Package ratelimit limits how fast one user, and one client address, may
// call a class of operations ("participate", "poll"): in-memory token
// buckets (golang.org/x/time/rate) in each API replica, each bucket a
// replica's share of a deployment-wide budget (the budget divided by the
// replica count the deployment declares). Nothing is written anywhere: a
// refusal costs no DynamoDB call. docs/ratelimit.md says how to set the
// budgets and what the edge (AWS WAF) adds.
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
	// each replica's bucket gets 1/Replicas of it.
	Replicas int
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
		b := l.bucket(k, now)
		if b == nil {
			continue
		}
		r := b.lim.ReserveN(now, 1)
		if d := r.DelayFrom(now); !r.OK() || d > 0 {
			r.CancelAt(now)
			for _, t := range taken {
				t.CancelAt(now)
			}
			if l.cfg.Refused != nil {
				l.cfg.Refused(class, k.by)
			}
			if !r.OK() {
				d = time.Minute
			}
			return false, d
		}
		taken = append(taken, r)
	}
	return true, 0
}

// bucket returns k's bucket, made when first seen; nil if k's class has
// no budget by k.by.
func (l *Limiter) bucket(k bucketKey, now time.Time) *bucket {
	rule, ok := l.cfg.Rules[k.class][k.by]
	if !ok || rule.Rate <= 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= l.cfg.MaxBuckets {
			l.evict(now)
		}
		n := float64(l.cfg.Replicas)
		b = &bucket{lim: rate.NewLimiter(rate.Limit(rule.Rate/n), max(1, int(math.Ceil(float64(rule.Burst)/n))))}
		l.buckets[k] = b
	}
	b.seen = now
	return b
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
