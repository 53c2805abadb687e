package ebsink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/pacerhq/pacer/sdk/eventsink"
	"github.com/pacerhq/pacer/sdk/eventsink/ebsink"
)

// wireEntry is a PutEvents request entry as it is on the wire.
type wireEntry struct {
	Source, DetailType, Detail, EventBusName string
	Time                                     float64
	Resources                                []string
}

// fakeBus is an EventBridge endpoint: it checks each PutEvents request as
// AWS would receive it, and fails the entries fail chooses.
type fakeBus struct {
	t    *testing.T
	fail func(call int, detail string) string // an error code, or ""

	mu        sync.Mutex
	calls     int
	sizes     []int
	delivered map[string]int // detail → times accepted
}

func (b *fakeBus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if got := r.Header.Get("X-Amz-Target"); got != "AWSEvents.PutEvents" {
		b.t.Errorf("X-Amz-Target %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/x-amz-json-1.1" {
		b.t.Errorf("Content-Type %q", got)
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		b.t.Errorf("unsigned request: %q", r.Header.Get("Authorization"))
	}
	body, _ := io.ReadAll(r.Body)
	var in struct{ Entries []wireEntry }
	if err := json.Unmarshal(body, &in); err != nil {
		b.t.Errorf("body %s: %v", body, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.sizes = append(b.sizes, len(in.Entries))
	type result struct {
		EventId      string `json:",omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	var out struct {
		FailedEntryCount int
		Entries          []result
	}
	for i, e := range in.Entries {
		if e.Source != "test.source" || e.DetailType != "Thing" || e.Time == 0 || e.EventBusName != "bus" {
			b.t.Errorf("entry %+v", e)
		}
		if code := b.fail(b.calls, e.Detail); code != "" {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, result{ErrorCode: code, ErrorMessage: "try later"})
			continue
		}
		b.delivered[e.Detail]++
		out.Entries = append(out.Entries, result{EventId: fmt.Sprintf("eb-%d-%d", b.calls, i)})
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func newSink(t *testing.T, fail func(int, string) string) (*ebsink.Sink, *fakeBus) {
	bus := &fakeBus{t: t, fail: fail, delivered: map[string]int{}}
	srv := httptest.NewServer(bus)
	t.Cleanup(srv.Close)
	client := eventbridge.New(eventbridge.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
	})
	return ebsink.New(client, ebsink.Config{Bus: "bus", Backoff: time.Millisecond, MaxAttempts: 4}), bus
}

func events(t *testing.T, n, detailBytes int) []eventsink.Envelope {
	var out []eventsink.Envelope
	for i := range n {
		ev, err := eventsink.New(fmt.Sprint(i), "test.source", "Thing", time.Now(),
			map[string]any{"n": i, "pad": strings.Repeat("x", detailBytes)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// 25 events go in calls of at most 10; the entries EventBridge fails
// (throttled) are sent again until accepted, and every event is delivered
// exactly once.
func TestPutRetriesFailedEntries(t *testing.T) {
	t.Parallel()
	sink, bus := newSink(t, func(call int, detail string) string {
		if call <= 3 && strings.Contains(detail, `"n":1`) { // n = 1, 10..19: throttled for 3 calls
			return "ThrottlingException"
		}
		return ""
	})
	evs := events(t, 25, 10)
	if err := sink.Put(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if got := bus.delivered[string(ev.Detail)]; got != 1 {
			t.Errorf("event %s delivered %d times", ev.ID, got)
		}
	}
	for _, n := range bus.sizes {
		if n > ebsink.MaxEntries {
			t.Errorf("a call carried %d entries", n)
		}
	}
	if bus.calls <= 3 {
		t.Errorf("%d calls: the failed entries were not sent again", bus.calls)
	}
}

// Entries that keep failing are reported, not dropped.
func TestPutReportsWhatItCouldNotDeliver(t *testing.T) {
	t.Parallel()
	sink, bus := newSink(t, func(_ int, detail string) string {
		if strings.Contains(detail, `"n":3,`) {
			return "InternalFailure"
		}
		return ""
	})
	err := sink.Put(context.Background(), events(t, 5, 10))
	if err == nil || !strings.Contains(err.Error(), "1 events not delivered after 4 attempts") || !strings.Contains(err.Error(), "InternalFailure") {
		t.Fatalf("err = %v", err)
	}
	if bus.calls != 4 {
		t.Errorf("%d calls, want 4 (one per attempt)", bus.calls)
	}
}

// Calls stay under 256 KB: 100 KB events go two per call.
func TestPutSplitsBySize(t *testing.T) {
	t.Parallel()
	sink, bus := newSink(t, func(int, string) string { return "" })
	if err := sink.Put(context.Background(), events(t, 5, 100*1024)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(bus.sizes) != "[2 2 1]" {
		t.Errorf("call sizes %v, want [2 2 1]", bus.sizes)
	}
	if err := sink.Put(context.Background(), events(t, 1, 300*1024)); err == nil {
		t.Error("a 300 KB event was accepted")
	}
}
