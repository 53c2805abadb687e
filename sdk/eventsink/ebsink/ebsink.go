// Package ebsink publishes eventsink envelopes to an Amazon EventBridge
// event bus with PutEvents.
//
// A batch is split into PutEvents calls of at most 10 entries and 256 KB
// (EventBridge's limits, entry sizes computed as AWS documents them). The
// SDK's retryer retries a call that fails as a whole (throttling, 5xx);
// entries that fail inside a successful call (FailedEntryCount > 0: e.g.
// ThrottlingException, InternalFailure) are sent again, alone, with
// exponential backoff, up to Config.MaxAttempts times. Put returns an error
// naming what is left when that runs out; nothing is dropped silently.
package ebsink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/cenkalti/backoff/v5"

	"github.com/pacerhq/pacer/sdk/eventsink"
)

// EventBridge's PutEvents limits.
const (
	MaxEntries   = 10
	MaxCallBytes = 256 * 1024
)

// Client is the subset of *eventbridge.Client that the sink uses.
type Client interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

var _ Client = (*eventbridge.Client)(nil)

// Config configures a Sink.
type Config struct {
	// Bus is the event bus name or ARN ("" is the account's default bus).
	Bus string
	// MaxAttempts bounds how often an entry is sent (default 8).
	MaxAttempts int
	// Backoff is the first wait before failed entries are sent again
	// (default 100 ms; it doubles, with jitter, up to 5 s).
	Backoff time.Duration
}

// Sink publishes to EventBridge.
type Sink struct {
	client Client
	cfg    Config
}

var _ eventsink.Sink = (*Sink)(nil)

// New returns a Sink publishing through client.
func New(client Client, cfg Config) *Sink {
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 8
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 100 * time.Millisecond
	}
	return &Sink{client: client, cfg: cfg}
}

// ErrTooLarge: an event is larger than one PutEvents call may carry.
var ErrTooLarge = errors.New("ebsink: event larger than 256 KB")

// EntrySize is an entry's size as EventBridge counts it against the 256 KB
// limit: 14 bytes for the time, plus the UTF-8 bytes of source, detail
// type, detail and each resource.
func EntrySize(e *types.PutEventsRequestEntry) int {
	n := 14 + len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

// Put implements eventsink.Sink.
func (s *Sink) Put(ctx context.Context, events []eventsink.Envelope) error {
	entries := make([]types.PutEventsRequestEntry, len(events))
	for i, ev := range events {
		entries[i] = types.PutEventsRequestEntry{
			Source: aws.String(ev.Source), DetailType: aws.String(ev.DetailType), Detail: aws.String(string(ev.Detail)),
			Time: aws.Time(ev.Time), Resources: ev.Resources,
		}
		if s.cfg.Bus != "" {
			entries[i].EventBusName = aws.String(s.cfg.Bus)
		}
		if EntrySize(&entries[i]) > MaxCallBytes {
			return fmt.Errorf("%w: event %s is %d bytes", ErrTooLarge, ev.ID, EntrySize(&entries[i]))
		}
	}
	for len(entries) > 0 {
		n, size := 0, 0
		for n < len(entries) && n < MaxEntries && size+EntrySize(&entries[n]) <= MaxCallBytes {
			size += EntrySize(&entries[n])
			n++
		}
		if err := s.send(ctx, entries[:n]); err != nil {
			return err
		}
		entries = entries[n:]
	}
	return nil
}

// send puts one call's entries, sending the failed ones again with
// backoff until none is left or the attempts run out.
func (s *Sink) send(ctx context.Context, pending []types.PutEventsRequestEntry) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval = s.cfg.Backoff, 5*time.Second
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		out, err := s.client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: pending})
		if err != nil {
			return struct{}{}, fmt.Errorf("ebsink: PutEvents: %w", err)
		}
		if out.FailedEntryCount == 0 {
			pending = nil
			return struct{}{}, nil
		}
		if len(out.Entries) != len(pending) {
			return struct{}{}, fmt.Errorf("ebsink: PutEvents answered %d entries for %d", len(out.Entries), len(pending))
		}
		var failed []types.PutEventsRequestEntry
		var first types.PutEventsResultEntry
		for i, r := range out.Entries {
			if r.ErrorCode != nil {
				if len(failed) == 0 {
					first = r
				}
				failed = append(failed, pending[i])
			}
		}
		pending = failed
		return struct{}{}, fmt.Errorf("ebsink: %d of the entries failed, first %s: %s",
			len(failed), aws.ToString(first.ErrorCode), aws.ToString(first.ErrorMessage))
	}, backoff.WithBackOff(b), backoff.WithMaxTries(uint(s.cfg.MaxAttempts)), backoff.WithMaxElapsedTime(0))
	if err != nil {
		return fmt.Errorf("ebsink: %d events not delivered after %d attempts: %w", len(pending), s.cfg.MaxAttempts, err)
	}
	return nil
}
