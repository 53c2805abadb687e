package asyncevent

import (
	"context"
	"errors"
)

// ErrNoDLQ: the Admin was built without a DeadLetters.
var ErrNoDLQ = errors.New("asyncevent: no dead-letter queue configured")

// DeadScanLimit bounds how many DLQ messages one view or one class redrive
// looks at.
const DeadScanLimit = 1000

// DLQView is what an admin sees of the queues.
type DLQView struct {
	MainDepth int
	DeadDepth int
	// ByClass counts the DLQ's messages by class, one per request (copies
	// collapsed, see DeadKey), over the Scanned messages the view looked
	// at: exact when Complete, else a lower bound.
	ByClass map[DeadClass]int
	// Scanned counts the physical messages looked at; Copies how many of
	// them were extra copies of a message.
	Scanned, Copies int
	// Complete says the view saw the whole DLQ (fewer than DeadScanLimit
	// messages were visible).
	Complete bool
	Messages []DeadMessage
}

// DeadMessage is a DLQ message, decoded when it can be.
type DeadMessage struct {
	MessageID    string
	ReceiveCount int
	SentAt       int64
	Class        DeadClass
	ErrorCode    string
	// Message is the decoded body; Raw holds the body when it does not
	// decode.
	Message *Message
	Raw     string
}

// DeadKey identifies the message a DLQ message is a copy of: the request
// id of a participation message, else the body. Two DLQ messages with one
// key ask for the same work (processing is idempotent), so one delivery of
// them is enough.
func DeadKey(body string) string {
	if m, err := DecodeMessage(body); err == nil {
		return "req:" + m.RequestID
	}
	return "raw:" + body
}

// DeadLetters shows the queue depths, the DLQ's counts by class (over up
// to DeadScanLimit messages, without consuming them) and up to limit of
// its messages, one per request.
func (a *Admin) DeadLetters(ctx context.Context, limit int) (*DLQView, error) {
	if a.cfg.DeadLetters == nil {
		return nil, ErrNoDLQ
	}
	main, dead, err := a.cfg.DeadLetters.Depths(ctx)
	if err != nil {
		return nil, errors.Join(ErrUnavailable, err)
	}
	v := &DLQView{MainDepth: main, DeadDepth: dead, ByClass: map[DeadClass]int{}, Complete: true, Messages: []DeadMessage{}}
	for _, c := range DeadClasses {
		v.ByClass[c] = 0
	}
	if dead == 0 {
		return v, nil
	}
	all, err := a.cfg.DeadLetters.PeekDead(ctx, DeadScanLimit)
	if err != nil {
		return nil, errors.Join(ErrUnavailable, err)
	}
	v.Scanned, v.Complete = len(all), len(all) < DeadScanLimit
	ms := collapse(all)
	v.Copies = len(all) - len(ms)
	for _, m := range ms {
		v.ByClass[m.Class]++
	}
	for _, m := range ms[:min(max(limit, 0), len(ms))] {
		dm := DeadMessage{MessageID: m.MessageID, ReceiveCount: m.ReceiveCount, SentAt: m.SentAt, Class: m.Class, ErrorCode: m.ErrorCode}
		if msg, err := DecodeMessage(m.Body); err == nil {
			dm.Message = &msg
		} else {
			dm.Raw = truncate(m.Body, 1024)
		}
		v.Messages = append(v.Messages, dm)
	}
	return v, nil
}

// collapse keeps one message per DeadKey, in first-seen order: the tagged
// copy when there is one.
func collapse(ms []DeadLetter) []DeadLetter {
	at := map[string]int{}
	var out []DeadLetter
	for _, m := range ms {
		k := DeadKey(m.Body)
		i, ok := at[k]
		switch {
		case !ok:
			at[k] = len(out)
			out = append(out, m)
		case out[i].Class == DeadUnknown && m.Class != DeadUnknown:
			out[i] = m
		}
	}
	return out
}

// RedriveClass moves the DLQ messages of one class back to the main queue
// (one per request; copies are deleted), looking at up to DeadScanLimit
// messages. It is synchronous: when it returns, the messages are in the
// main queue.
func (a *Admin) RedriveClass(ctx context.Context, class DeadClass) (RedriveResult, error) {
	if a.cfg.DeadLetters == nil {
		return RedriveResult{}, ErrNoDLQ
	}
	if _, err := ParseDeadClass(string(class)); err != nil {
		return RedriveResult{}, err
	}
	res, err := a.cfg.DeadLetters.RedriveClass(ctx, class, DeadScanLimit)
	if err != nil {
		return res, errors.Join(ErrUnavailable, err)
	}
	return res, nil
}

// Redrive moves every DLQ message back to the main queue, where workers
// process them again (idempotently). It returns a handle of the move, or
// ErrRedriveRunning while an earlier move is still running.
func (a *Admin) Redrive(ctx context.Context) (string, error) {
	if a.cfg.DeadLetters == nil {
		return "", ErrNoDLQ
	}
	h, err := a.cfg.DeadLetters.Redrive(ctx)
	if errors.Is(err, ErrRedriveRunning) {
		return "", err
	}
	if err != nil {
		return "", errors.Join(ErrUnavailable, err)
	}
	return h, nil
}
