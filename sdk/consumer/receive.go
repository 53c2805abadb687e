package consumer

import (
	"context"
	"sync"
	"time"
)

// handle is one handler of Run's pool: it handles the messages of buf
// until buf is closed, sends the receipt of each it acks to acks, and
// frees the message's slot.
func handle(hctx context.Context, h Handler, buf <-chan Message, slots <-chan struct{}, acks chan<- string) {
	for m := range buf {
		if h(hctx, m) {
			acks <- m.ReceiptHandle
		}
		<-slots
	}
}

// takeSlots waits for one free slot, then takes as many as are free, up
// to batch. While handlers still have messages waiting in buf, it waits
// for half a batch of free slots, so that receives stay batched. It
// returns the slots taken (fewer, even 0, when ctx ends).
func takeSlots(ctx context.Context, slots chan<- struct{}, buf <-chan Message, batch int) int {
	n := 0
	for n < batch {
		select {
		case slots <- struct{}{}:
			n++
			continue
		default:
		}
		if n > 0 && (len(buf) == 0 || n >= batch/2) {
			return n
		}
		select {
		case slots <- struct{}{}:
			n++
		case <-ctx.Done():
			return n
		}
	}
	return n
}

// receiver runs Run's receives, each for the slots it took, and backs off
// after a failed one.
type receiver struct {
	src   Source
	cfg   Config
	slots chan struct{}
	buf   chan Message
	// inflight holds a token for each receive in flight.
	inflight chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	backoff  time.Duration // after a failed receive; under mu
}

// pause waits out the backoff after a failed receive, or until ctx ends.
func (r *receiver) pause(ctx context.Context) {
	r.mu.Lock()
	wait := r.backoff
	r.mu.Unlock()
	if wait > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// receive receives up to n messages into buf, frees the slots of those
// it did not get and its inflight token; a failed receive (while ctx
// lives) is logged and doubles the backoff, between 100 ms and 5 s.
func (r *receiver) receive(ctx context.Context, n int) {
	defer func() { <-r.inflight }()
	msgs, err := r.src.Receive(ctx, n, r.cfg.Wait, r.cfg.Visibility)
	for range n - len(msgs) {
		<-r.slots
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Log.Error("consumer: receive", "err", err)
			r.backoff = min(max(r.backoff*2, 100*time.Millisecond), 5*time.Second)
		}
		return
	}
	r.backoff = 0
	for _, m := range msgs {
		r.buf <- m
	}
}
