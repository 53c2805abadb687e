// Package consumer is a generic SQS-style worker runtime: it receives
// messages in batches with long polling, hands them to a handler with
// bounded concurrency, deletes the handled ones in batches, and stops
// gracefully (stop receiving, finish what is in flight, flush deletes).
//
// It knows no domain: a queue adapter implements the small Source interface
// (modules/asyncevent/sqsqueue does, on SQS) and the worker service gives
// the Handler (services/internal/asynceventworker adapts AsyncEvent's
// Service.Process to it).
package consumer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Message is one received message.
type Message struct {
	ID            string
	Body          string
	ReceiptHandle string
	// ReceiveCount is the ApproximateReceiveCount (1 on first delivery).
	ReceiveCount int
	// SentAt is when the queue accepted the message.
	SentAt time.Time
}

// Source is a queue the consumer reads.
type Source interface {
	// Receive long-polls for up to max messages, waiting at most wait,
	// hiding them for visibility.
	Receive(ctx context.Context, max int, wait, visibility time.Duration) ([]Message, error)
	// Delete deletes up to 10 messages by receipt handle.
	Delete(ctx context.Context, handles []string) error
}

// Handler processes a message and reports whether to delete it. A message
// not deleted becomes visible again after the visibility timeout.
type Handler func(ctx context.Context, m Message) (ack bool)

// Config tunes a consumer.
type Config struct {
	// Concurrency bounds the messages handled at once (default 10). Up to
	// 2 batches more are received ahead of the handlers (hidden from other
	// consumers meanwhile, and handled even if ctx ends first), so a
	// receive's round trip is not on a message's path.
	Concurrency int
	// Batch is the most messages per receive, 1..10 (default 10).
	Batch int
	// Visibility is how long a received message stays hidden (default
	// 30 s); keep it above the longest handling time.
	Visibility time.Duration
	// Wait is the long-poll wait, up to 20 s (default 10 s).
	Wait time.Duration
	// StopTimeout bounds how long in-flight handlers may run after the
	// context is cancelled (default 10 s); after it their context is
	// cancelled too.
	StopTimeout time.Duration
	// DeleteEvery is how long acks may wait to fill a delete batch
	// (default 20 ms).
	DeleteEvery time.Duration
	// Log receives errors (default slog.Default()).
	Log *slog.Logger
}

func (c *Config) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 10
	}
	if c.Batch <= 0 || c.Batch > 10 {
		c.Batch = 10
	}
	if c.Visibility <= 0 {
		c.Visibility = 30 * time.Second
	}
	if c.Wait < 0 || c.Wait > 20*time.Second {
		c.Wait = 20 * time.Second
	}
	if c.Wait == 0 {
		c.Wait = 10 * time.Second
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 10 * time.Second
	}
	if c.DeleteEvery <= 0 {
		c.DeleteEvery = 20 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

// Run consumes src until ctx is cancelled, then stops receiving, lets
// in-flight handlers finish the messages received (up to StopTimeout),
// deletes what they acked, and returns nil.
func Run(ctx context.Context, src Source, h Handler, cfg Config) error {
	cfg.defaults()
	// Handlers and deletes outlive ctx for the graceful stop.
	hctx, hcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hcancel()
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(cfg.StopTimeout, hcancel)
		context.AfterFunc(hctx, func() { t.Stop() })
	})
	defer stop()

	acks := make(chan string, cfg.Concurrency+cfg.Batch)
	deleted := make(chan struct{})
	go func() {
		defer close(deleted)
		deleteLoop(hctx, src, acks, cfg)
	}()

	// A slot is a message held: being handled, or received ahead and
	// waiting in buf for a handler. Up to 2 batches are received ahead,
	// by up to 2 receives in flight, so a handler that finishes takes the
	// next message at once instead of waiting for a receive round trip
	// (receiving only for the slots just freed, the round trip, not the
	// handlers, bounded the rate: half the plain loop's in
	// BenchmarkDrain).
	const receivers = 2
	slots := make(chan struct{}, cfg.Concurrency+receivers*cfg.Batch)
	buf := make(chan Message, cap(slots))
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() { handle(hctx, h, buf, slots, acks) })
	}
	r := &receiver{src: src, cfg: cfg, slots: slots, buf: buf, inflight: make(chan struct{}, receivers)}
	for ctx.Err() == nil {
		select {
		case r.inflight <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		n := takeSlots(ctx, slots, buf, cfg.Batch)
		r.pause(ctx)
		if ctx.Err() != nil {
			for range n {
				<-slots
			}
			<-r.inflight
			break
		}
		r.wg.Go(func() { r.receive(ctx, n) })
	}
	r.wg.Wait()
	close(buf)
	wg.Wait()
	close(acks)
	<-deleted
	return nil
}

// deleteLoop deletes acked messages in batches of up to 10, flushing a
// partial batch after cfg.DeleteEvery.
func deleteLoop(ctx context.Context, src Source, acks <-chan string, cfg Config) {
	var batch []string
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := src.Delete(ctx, batch); err != nil && !errors.Is(err, context.Canceled) {
			// The messages come back after the visibility timeout and are
			// acked again: handlers are idempotent.
			cfg.Log.Error("consumer: delete batch", "n", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case h, ok := <-acks:
			if !ok {
				flush()
				return
			}
			if len(batch) == 0 {
				timer.Reset(cfg.DeleteEvery)
			}
			batch = append(batch, h)
			if len(batch) == 10 {
				timer.Stop()
				flush()
			}
		case <-timer.C:
			flush()
		}
	}
}
