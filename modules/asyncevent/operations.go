package asyncevent

import (
	"log/slog"
	"sync"
	"time"
)

// Operations heals and checks what AsyncEvent stores: it enqueues again
// the requests stranded in RECEIVED and re-queues failed enqueues
// (SweepStranded, RequeueFailed), brings the locks of events closed early
// down (ExpireLocks) and checks the capacity invariant of the open events
// (CheckCapacity). A worker process builds one for its periodic sweep and
// lock jobs; the API process builds one for its admin sweep and re-queue
// routes and its capacity gauge. It is safe for concurrent use.
type Operations struct {
	cfg OperationsConfig
	enq *enqueuer

	// CheckCapacity's listing of the open events: those the store listed
	// open at openAt (see OperationsConfig.OpenEventsEvery), under listMu.
	listMu sync.Mutex
	open   map[string]bool
	openAt time.Time
}

// OperationsConfig configures an Operations.
type OperationsConfig struct {
	// Requests finds and re-queues stranded and failed requests.
	Requests SweepStore
	// Events reads events: a re-queued request's (through Cache) and the
	// open ones CheckCapacity checks.
	Events EventReader
	// Capacity lists the open events and counts their requests and seats
	// (CheckCapacity).
	Capacity CapacityReader
	// LockJobs keeps the lock jobs of events closed early (ExpireLocks).
	LockJobs LockJobStore
	// Queue takes the re-queued messages. Nil: SweepStranded and
	// RequeueFailed answer ErrUnavailable.
	Queue Queue
	// Cache is the process's event cache (see EventCache), shared with its
	// Ingest: CheckCapacity looks first at the events that Ingest admitted
	// participations to. Nil: a cache of this Operations' own, with
	// DefaultEventCacheTTL.
	Cache *EventCache

	// RequeueAfter is how long a request may stay RECEIVED before the
	// sweep enqueues it again (default 30 s; negative disables). See
	// SweepStranded.
	RequeueAfter time.Duration
	// SweepLookback is how far back SweepStranded looks for requests by
	// default (see SweepOptions.Lookback): 24 hours, at most RequestTTL
	// (older requests are reached by event: SweepOptions.EventID).
	SweepLookback time.Duration
	// OpenEventsEvery is how often CheckCapacity asks the store for the
	// open events, on DynamoDB a Query of the partition listing them
	// (default 10 min; negative: on every check). In between it checks
	// the events that read found and, first, those the process's Ingest
	// has admitted a participation to since, so an event with traffic
	// here is checked from its first participation on.
	OpenEventsEvery time.Duration
	// LockExpiryRate bounds the lock writes a second of one ExpireLocks
	// job (default 100).
	LockExpiryRate int
	// LockJobLease is how long ExpireLocks holds a job beyond a page's
	// time at the paced rate before another worker may take it over
	// (default 10 s).
	LockJobLease time.Duration
	// WorkerID names the worker process: the lock jobs' leases are taken
	// in its name. Empty: a new id for each ExpireLocks run.
	WorkerID string
	// Lateness bounds the queuedAt a re-queue stamps (its WriteTimeout),
	// and CheckCapacity reads an event again after its IndexLag when the
	// counts look broken. The same in every process (see Lateness).
	Lateness Lateness

	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
}

// withDefaults returns c with every unset field at its default.
func (c OperationsConfig) withDefaults() OperationsConfig {
	if c.Cache == nil {
		c.Cache = NewEventCache(0)
	}
	if c.RequeueAfter == 0 {
		c.RequeueAfter = 30 * time.Second
	}
	if c.SweepLookback <= 0 {
		c.SweepLookback = DefaultSweepLookback
	}
	c.SweepLookback = min(c.SweepLookback, RequestTTL)
	if c.OpenEventsEvery == 0 {
		c.OpenEventsEvery = 10 * time.Minute
	}
	if c.LockExpiryRate <= 0 {
		c.LockExpiryRate = 100
	}
	if c.LockJobLease <= 0 {
		c.LockJobLease = 10 * time.Second
	}
	c.Lateness = c.Lateness.withDefaults()
	c.Now, c.Log = defaultNow(c.Now), defaultLog(c.Log)
	return c
}

// NewOperations returns an Operations over cfg's ports.
func NewOperations(cfg OperationsConfig) *Operations {
	cfg = cfg.withDefaults()
	return &Operations{cfg: cfg, enq: newEnqueuer(cfg.Queue, cfg.Requests, cfg.Lateness, cfg.Now, cfg.Log)}
}

func (o *Operations) now() int64 { return o.cfg.Now().UnixMilli() }
