package asyncevent

import (
	"context"
	"crypto/rand"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
)

// Config tunes a Service. The zero value works.
type Config struct {
	// EventCacheTTL is how long an EventConfig read is reused in process
	// (default 2 s; negative disables the cache).
	EventCacheTTL time.Duration
	// DrawGrace is how long after the lottery cutoff a draw may start
	// (default 5 s), so that entries accepted just before the cutoff are
	// queued before the draw looks for pending ones.
	DrawGrace time.Duration
	// DrawConcurrency bounds the draw's parallel writes (default 16).
	DrawConcurrency int
	// DrawIndexWait is how long a draw waits for the event index (GSI2,
	// eventually consistent on DynamoDB) to show every counted entry
	// before it gives up with ErrUnavailable (default 10 s; the draw can be
	// called again).
	DrawIndexWait time.Duration
	// RequeueAfter is how long a request may stay RECEIVED before the
	// sweep enqueues it again (default 30 s; negative disables). See
	// Service.SweepStranded.
	RequeueAfter time.Duration
	// WriteTimeout bounds each write that records a queuedAt (ingest's
	// RECEIVED → QUEUED, a worker's RECEIVED → PROCESSING): the write is
	// given up after it (default 2 s). With ClockSkew and IndexLag it
	// makes MaxLateness, the arrival allocator's safety margin.
	WriteTimeout time.Duration
	// ClockSkew is the most the clocks of the processes that stamp
	// queuedAt may differ from the allocator's (default 500 ms; negative
	// for none).
	ClockSkew time.Duration
	// IndexLag is the most the event index (GSI2, eventually consistent)
	// may lag a write (default 1 s; negative for none, as on DynamoDB
	// Local).
	IndexLag time.Duration
	// AllocLease is how long an arrival allocator holds an event before
	// another may take it over (default 10 s): a crashed allocator delays
	// its event by about this. An allocator whose batches take longer
	// holds it for three batches instead (at most ten AllocLeases), and
	// each written batch renews the lease.
	AllocLease time.Duration
	// AllocEvery is how often the allocator loop (RunAllocator) looks at
	// the events it has seen candidates of (default 200 ms).
	AllocEvery time.Duration
	// CandidateWaits is how many times an arrival candidate's message is
	// continued (acked and sent again, delayed, with a fresh receive
	// count) while its request waits for the allocator (default 10;
	// negative: never, each wait is a receive). Waiting is not failing: a
	// long queue must not push candidates into the DLQ, which holds only
	// messages that failed after retries. After these waits (about 7.5
	// minutes with the defaults) the message stays on the queue between
	// deliveries and its receives count toward maxReceiveCount: a request
	// the allocator has not decided by then reaches the DLQ (class
	// ALLOCATING).
	CandidateWaits int
	// WorkerID names this process when it runs a worker: the worker's
	// transitions and its arrival allocator's decisions record it on the
	// request (workerId), and the analytics events carry it. Empty (the
	// API) records nothing.
	WorkerID string
	// OpenEventsEvery is how often CheckCapacity asks the store for the
	// open events, on DynamoDB a Query of the partition listing them
	// (default 10 min; negative: on every check). In between it checks the events
	// that read found and, first, those this service has admitted a
	// participation to since, so an event with traffic here is checked
	// from its first participation on.
	OpenEventsEvery time.Duration
	// LockExpiryRate bounds the lock writes a second of one ExpireLocks job
	// (default 100).
	LockExpiryRate int
	// SweepLookback is how far back SweepStranded looks for requests by
	// default (see SweepOptions.Lookback): 24 hours, at most RequestTTL.
	SweepLookback time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
	// Observer, if set, hears the service's answers (for metrics).
	Observer Observer
}

// Service is the AsyncEvent domain logic. It is safe for concurrent use.
type Service struct {
	store Store
	queue Queue
	dlq   DeadLetters
	cfg   Config

	mu      sync.Mutex
	events  map[string]cachedEvent
	soldOut map[string]bool
	// forgets counts forgetEvent calls: a read that began before one is
	// not cached (it may hold the status the change replaced).
	forgets uint64

	// The arrival allocator: this service's lease owner id, the events
	// workers made candidates of (RunAllocator decides them), and each
	// event's lease and run lock.
	owner      string
	kicks      chan string
	allocMu    sync.Mutex
	allocating map[string]*allocState
	late       atomic.Int64
	// unsure counts queuedAt writes of unknown outcome (see
	// QueuedAtUnsure).
	unsure atomic.Int64

	// CheckCapacity's events: those the store listed open at openAt, and
	// those noted since (see Config.OpenEventsEvery); noting starts with
	// the first listing.
	listMu   sync.Mutex
	checking atomic.Bool
	openMu   sync.Mutex
	open     map[string]bool
	noted    map[string]bool
	openAt   time.Time
}

// MaxLateness is the most a request's queuedAt may lie in the past when its
// QUEUED write becomes visible in the event index: WriteTimeout +
// ClockSkew + IndexLag. The arrival allocator decides only requests queued
// before now − MaxLateness.
func (c Config) MaxLateness() time.Duration {
	return c.WriteTimeout + max(c.ClockSkew, 0) + max(c.IndexLag, 0)
}

type cachedEvent struct {
	cfg     *EventConfig
	expires time.Time
}

// New returns a Service. queue may be nil for a service that only reads or
// processes; dlq may be nil when the DLQ endpoints are not offered.
func New(store Store, queue Queue, dlq DeadLetters, cfg Config) *Service {
	cfg = cfg.WithDefaults()
	return &Service{store: store, queue: queue, dlq: dlq, cfg: cfg, events: map[string]cachedEvent{}, soldOut: map[string]bool{},
		owner: newID(cfg.Now().UnixMilli()), kicks: make(chan string, 1024), allocating: map[string]*allocState{}}
}

// WithDefaults returns c with every unset field at its default, as New
// uses it: Config{}.WithDefaults().MaxLateness() is the default safety
// margin of the arrival allocator (3.5 s).
func (c Config) WithDefaults() Config {
	cfg := c
	if cfg.EventCacheTTL == 0 {
		cfg.EventCacheTTL = 2 * time.Second
	}
	if cfg.DrawGrace == 0 {
		cfg.DrawGrace = 5 * time.Second
	}
	if cfg.DrawConcurrency <= 0 {
		cfg.DrawConcurrency = 16
	}
	if cfg.DrawIndexWait == 0 {
		cfg.DrawIndexWait = 10 * time.Second
	}
	if cfg.RequeueAfter == 0 {
		cfg.RequeueAfter = 30 * time.Second
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 2 * time.Second
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = 500 * time.Millisecond
	}
	if cfg.IndexLag == 0 {
		cfg.IndexLag = time.Second
	}
	if cfg.AllocLease <= 0 {
		cfg.AllocLease = 10 * time.Second
	}
	if cfg.AllocEvery <= 0 {
		cfg.AllocEvery = 200 * time.Millisecond
	}
	if cfg.CandidateWaits == 0 {
		cfg.CandidateWaits = 10
	}
	if cfg.OpenEventsEvery == 0 {
		cfg.OpenEventsEvery = 10 * time.Minute
	}
	if cfg.LockExpiryRate <= 0 {
		cfg.LockExpiryRate = 100
	}
	if cfg.SweepLookback <= 0 {
		cfg.SweepLookback = DefaultSweepLookback
	}
	cfg.SweepLookback = min(cfg.SweepLookback, RequestTTL)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return cfg
}

func (s *Service) now() int64 { return s.cfg.Now().UnixMilli() }

// event returns the EventConfig, from the in-process cache when fresh.
func (s *Service) event(ctx context.Context, eventID string) (*EventConfig, error) {
	if s.cfg.EventCacheTTL > 0 {
		s.mu.Lock()
		c, ok := s.events[eventID]
		s.mu.Unlock()
		if ok && time.Now().Before(c.expires) {
			return c.cfg, nil
		}
	}
	s.mu.Lock()
	gen := s.forgets
	s.mu.Unlock()
	// Strongly consistent: an eventually consistent read could return the
	// status before a change (a close, a draw) and cache it for the TTL.
	cfg, err := s.store.GetEvent(ctx, eventID, true)
	if err != nil {
		return nil, err
	}
	s.cacheEvent(cfg, gen)
	return cfg, nil
}

// cacheEvent caches cfg, read when forgets was gen, unless a change was
// forgotten since.
func (s *Service) cacheEvent(cfg *EventConfig, gen uint64) {
	if s.cfg.EventCacheTTL <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.forgets != gen {
		return
	}
	if len(s.events) > 10000 { // bound memory: drop everything, it refills
		clear(s.events)
	}
	s.events[cfg.EventID] = cachedEvent{cfg: cfg, expires: time.Now().Add(s.cfg.EventCacheTTL)}
}

// forgetEvent drops a changed event from the cache, and keeps reads that
// were in flight from caching what they read.
func (s *Service) forgetEvent(eventID string) {
	s.mu.Lock()
	delete(s.events, eventID)
	s.forgets++
	s.mu.Unlock()
}

func (s *Service) isSoldOut(eventID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.soldOut[eventID]
}

func (s *Service) setSoldOut(eventID string, v bool) {
	s.mu.Lock()
	if v {
		s.soldOut[eventID] = true
	} else {
		delete(s.soldOut, eventID)
	}
	s.mu.Unlock()
}

var entropy = ulid.Monotonic(rand.Reader, 0)
var entropyMu sync.Mutex

// newID returns a new ULID: 26 characters, sortable by creation time.
func newID(now int64) string {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return ulid.MustNew(uint64(now), entropy).String()
}
