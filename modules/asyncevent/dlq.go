package asyncevent

import (
	"context"
	"errors"
)

// ErrNoDLQ: the service was built without a DeadLetters.
var ErrNoDLQ = errors.New("asyncevent: no dead-letter queue configured")

// DLQView is what an admin sees of the queues.
type DLQView struct {
	MainDepth int
	DeadDepth int
	Messages  []DeadMessage
}

// DeadMessage is a DLQ message, decoded when it can be.
type DeadMessage struct {
	MessageID    string
	ReceiveCount int
	SentAt       int64
	// Message is the decoded body; Raw holds the body when it does not
	// decode.
	Message *Message
	Raw     string
}

// DeadLetters shows the queue depths and up to max DLQ messages (without
// consuming them).
func (s *Service) DeadLetters(ctx context.Context, max int) (*DLQView, error) {
	if s.dlq == nil {
		return nil, ErrNoDLQ
	}
	main, dead, err := s.dlq.Depths(ctx)
	if err != nil {
		return nil, errors.Join(ErrUnavailable, err)
	}
	v := &DLQView{MainDepth: main, DeadDepth: dead, Messages: []DeadMessage{}}
	if dead == 0 || max <= 0 {
		return v, nil
	}
	ms, err := s.dlq.PeekDead(ctx, max)
	if err != nil {
		return nil, errors.Join(ErrUnavailable, err)
	}
	for _, m := range ms {
		dm := DeadMessage{MessageID: m.MessageID, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt}
		if msg, err := DecodeMessage(m.Body); err == nil {
			dm.Message = &msg
		} else {
			dm.Raw = truncate(m.Body, 1024)
		}
		v.Messages = append(v.Messages, dm)
	}
	return v, nil
}

// Redrive moves every DLQ message back to the main queue, where workers
// process them again (idempotently). It returns a handle of the move, or
// ErrRedriveRunning while an earlier move is still running.
func (s *Service) Redrive(ctx context.Context) (string, error) {
	if s.dlq == nil {
		return "", ErrNoDLQ
	}
	h, err := s.dlq.Redrive(ctx)
	if errors.Is(err, ErrRedriveRunning) {
		return "", err
	}
	if err != nil {
		return "", errors.Join(ErrUnavailable, err)
	}
	return h, nil
}
