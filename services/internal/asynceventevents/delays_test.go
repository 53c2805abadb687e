package asynceventevents_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

// change is a stream record of a Request item going from old to cur (old
// nil: created).
func change(t *testing.T, seq int, old, cur *dynamostore.RequestItem) stream.Record {
	t.Helper()
	r := stream.Record{Kind: stream.Insert, SequenceNumber: fmt.Sprint(seq)}
	if old != nil {
		oi, err := attributevalue.MarshalMap(old)
		if err != nil {
			t.Fatal(err)
		}
		oi["entityType"], _ = attributevalue.Marshal("REQUEST")
		r.Kind, r.OldImage = stream.Modify, oi
	}
	ci, err := attributevalue.MarshalMap(cur)
	if err != nil {
		t.Fatal(err)
	}
	ci["entityType"], _ = attributevalue.Marshal("REQUEST")
	r.NewImage = ci
	return r
}

type failingSink struct{ fails int }

func (s *failingSink) Put(context.Context, []eventsink.Envelope) error {
	if s.fails > 0 {
		s.fails--
		return errors.New("injected: sink down")
	}
	return nil
}

// The publisher observes each delay once, from the stored times: a
// lottery entry's QueueDelay when it starts processing (not at the draw),
// its E2EDelay when the draw makes it terminal; a change that records
// neither observes nothing, and a batch the sink refused observes nothing
// until it is delivered again.
func TestPublisherObservesStoredDelaysOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	d := asynceventevents.NewDelays(reg)
	sink := &failingSink{fails: 1}
	h := asynceventevents.Handler(analytics.Mapper{}, sink, d)
	queued := &dynamostore.RequestItem{RequestID: "r1", EventID: "lot", UserID: "u", EventType: asyncevent.Lottery,
		Status: asyncevent.StatusQueued, RequestedAt: 1_000, QueuedAt: 1_010}
	started := *queued
	started.Status, started.StartedAt, started.UIPhase = asyncevent.StatusProcessing, 1_260, asyncevent.PhaseCollecting
	attempt := started
	attempt.LastErrorAt, attempt.LastErrorCode = 1_300, "ThrottlingException"
	drawn := attempt
	drawn.Status, drawn.FinishedAt, drawn.UIResult = asyncevent.StatusSucceeded, 61_010, asyncevent.ResultSuccess

	ctx := context.Background()
	batch := []stream.Record{change(t, 1, nil, queued), change(t, 2, queued, &started)}
	if err := h(ctx, batch); err == nil {
		t.Fatal("the sink refused the batch, yet the handler returned nil")
	}
	fams := metricstest.Gather(t, reg)
	if n := fams.Value("pacer_queue_delay_seconds", "event_type", "LOTTERY"); n > 0 {
		t.Fatalf("%v queue delays observed for a batch the sink refused", n)
	}
	for _, b := range [][]stream.Record{batch, {change(t, 3, &started, &attempt)}, {change(t, 4, &attempt, &drawn)}} {
		if err := h(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	fams = metricstest.Gather(t, reg)
	for _, c := range []struct {
		name    string
		count   float64
		sumSecs float64
	}{{"pacer_queue_delay_seconds", 1, 0.25}, {"pacer_e2e_delay_seconds", 1, 60}} {
		n, sum := fams.Value(c.name, "event_type", "LOTTERY"), fams.Sum(c.name, "event_type", "LOTTERY")
		if n != c.count || math.Abs(sum-c.sumSecs) > 1e-9 {
			t.Errorf("%s: %v observations summing to %v s, want %v summing to %v s", c.name, n, sum, c.count, c.sumSecs)
		}
	}
}
