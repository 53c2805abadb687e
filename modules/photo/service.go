package photo

import (
	"log/slog"
	"time"
)

// Config configures a Service.
type Config struct {
	// Truth is the Postgres side (pgstore).
	Truth Truth
	// Index is the DynamoDB side (dynamostore).
	Index Index
	// Now returns the time (default time.Now).
	Now func() time.Time
	// Log receives warnings (default slog.Default()).
	Log *slog.Logger
	// Observer, if set, hears ingests and searches (for metrics).
	Observer Observer
}

// Service is PhotoService's domain logic. It is safe for concurrent use.
type Service struct {
	truth Truth
	index Index
	now   func() time.Time
	log   *slog.Logger
	obs   Observer
}

// NewService returns a Service.
func NewService(cfg Config) *Service {
	s := &Service{truth: cfg.Truth, index: cfg.Index, now: cfg.Now, log: cfg.Log, obs: cfg.Observer}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}
