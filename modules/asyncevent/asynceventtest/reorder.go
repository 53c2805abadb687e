package asynceventtest

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// Reorder tunes a ReorderQueue's adversary. The zero value delivers in
// order, once.
type Reorder struct {
	// Seed seeds every random choice the queue makes.
	Seed uint64
	// Window shuffles: a receive picks its messages at random among the
	// Window oldest visible ones (0 or 1: oldest first).
	Window int
	// MaxDelay delays each sent message: it becomes visible a random time
	// in [0, MaxDelay) after the send.
	MaxDelay time.Duration
	// Duplicate is the probability that a delivered message stays visible,
	// so that another receive delivers it again while the first is being
	// handled (SQS's at-least-once delivery).
	Duplicate float64
	// LoseAck is the probability that a delete is lost, so that the
	// message is delivered again after its visibility timeout.
	LoseAck float64
}

// ReorderQueue is an in-memory queue for tests that delivers adversarially
// (shuffled within a window, delayed, duplicated, redelivered after a
// visibility timeout), as a standard SQS queue may. It is the ingest's
// asyncevent.Queue, the workers' asyncevent.DelayQueue and their
// consumer.Source. The random choices
// come from Reorder.Seed; goroutine scheduling still varies from run to
// run, so a seed fixes the adversary, not the interleaving.
type ReorderQueue struct {
	cfg Reorder

	mu     sync.Mutex
	rng    *rand.Rand
	msgs   []*queued // in send order; deleted ones are dropped
	byID   map[string]*queued
	next   int
	wake   chan struct{}
	counts ReorderCounts
}

// ReorderCounts counts what a ReorderQueue did.
type ReorderCounts struct {
	Sent, Delivered, Duplicated, LostAcks, Redelivered, Deleted int
	// Overtook counts first deliveries of a message while a message sent
	// before it had never been delivered (and was not delivered by the
	// same receive): the reordering a consumer sees.
	Overtook int
}

type queued struct {
	id        string
	body      string
	sentAt    time.Time
	visibleAt time.Time
	receives  int
}

var (
	_ asyncevent.Queue      = (*ReorderQueue)(nil)
	_ asyncevent.DelayQueue = (*ReorderQueue)(nil)
	_ consumer.Source       = (*ReorderQueue)(nil)
)

// NewReorderQueue returns an empty queue with the adversary cfg.
func NewReorderQueue(cfg Reorder) *ReorderQueue {
	return &ReorderQueue{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		byID: map[string]*queued{}, wake: make(chan struct{})}
}

// Send enqueues body, visible after a random delay below MaxDelay.
func (q *ReorderQueue) Send(ctx context.Context, body string) error {
	return q.SendAfter(ctx, body, 0)
}

// SendAfter enqueues body, visible delay plus a random delay below
// MaxDelay from now.
func (q *ReorderQueue) SendAfter(_ context.Context, body string, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	q.next++
	m := &queued{id: strconv.Itoa(q.next), body: body, sentAt: now, visibleAt: now.Add(max(delay, 0))}
	if q.cfg.MaxDelay > 0 {
		m.visibleAt = m.visibleAt.Add(time.Duration(q.rng.Int64N(int64(q.cfg.MaxDelay))))
	}
	q.msgs = append(q.msgs, m)
	q.byID[m.id] = m
	q.counts.Sent++
	close(q.wake)
	q.wake = make(chan struct{})
	return nil
}

// Receive returns up to n visible messages, picked at random among the
// Window oldest, waiting up to wait for one. Each is hidden for
// visibility, unless the adversary duplicates it.
func (q *ReorderQueue) Receive(ctx context.Context, n int, wait, visibility time.Duration) ([]consumer.Message, error) {
	deadline := time.Now().Add(wait)
	for {
		q.mu.Lock()
		out, soonest := q.pick(n, visibility)
		wake := q.wake
		q.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		if !soonest.IsZero() {
			left = min(left, time.Until(soonest))
		}
		t := time.NewTimer(max(left, time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// pick chooses the messages of one receive (q.mu held). soonest is when
// the next hidden message becomes visible (zero if none).
func (q *ReorderQueue) pick(n int, visibility time.Duration) (out []consumer.Message, soonest time.Time) {
	now := time.Now()
	var visible []*queued
	window := max(q.cfg.Window, 1)
	for _, m := range q.msgs {
		if m.visibleAt.After(now) {
			if soonest.IsZero() || m.visibleAt.Before(soonest) {
				soonest = m.visibleAt
			}
			continue
		}
		if len(visible) < window {
			visible = append(visible, m)
		}
	}
	q.rng.Shuffle(len(visible), func(i, j int) { visible[i], visible[j] = visible[j], visible[i] })
	chosen := visible[:min(n, len(visible))]
	q.counts.Overtook += q.overtaking(chosen)
	for _, m := range chosen {
		m.receives++
		q.counts.Delivered++
		if m.receives > 1 {
			q.counts.Redelivered++
		}
		if q.cfg.Duplicate > 0 && q.rng.Float64() < q.cfg.Duplicate {
			q.counts.Duplicated++ // stays visible: another receive gets it too
		} else {
			m.visibleAt = now.Add(visibility)
		}
		out = append(out, consumer.Message{ID: m.id, Body: m.body, ReceiptHandle: m.id,
			ReceiveCount: m.receives, SentAt: m.sentAt})
	}
	return out, soonest
}

// overtaking counts the messages of chosen delivered for the first time
// although an older message, not in chosen, was never delivered (q.mu
// held).
func (q *ReorderQueue) overtaking(chosen []*queued) int {
	oldest := -1 // send position of the oldest message never delivered, outside chosen
	for i, m := range q.msgs {
		if m.receives == 0 && !slices.Contains(chosen, m) {
			oldest = i
			break
		}
	}
	if oldest < 0 {
		return 0
	}
	n := 0
	for _, m := range q.msgs[oldest+1:] {
		if m.receives == 0 && slices.Contains(chosen, m) {
			n++
		}
	}
	return n
}

// Delete deletes messages by receipt handle, except the acks the adversary
// loses.
func (q *ReorderQueue) Delete(_ context.Context, handles []string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, h := range handles {
		m, ok := q.byID[h]
		if !ok {
			continue
		}
		if q.cfg.LoseAck > 0 && q.rng.Float64() < q.cfg.LoseAck {
			q.counts.LostAcks++
			continue
		}
		delete(q.byID, h)
		for i, v := range q.msgs {
			if v == m {
				q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
				break
			}
		}
		q.counts.Deleted++
	}
	return nil
}

// Len is how many messages are not deleted.
func (q *ReorderQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// Counts returns what the queue did so far.
func (q *ReorderQueue) Counts() ReorderCounts {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.counts
}
