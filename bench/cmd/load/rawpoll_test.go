package main

import (
	"strconv"
	"testing"
	"time"

	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Polls back off as the page's (1.6×, at most 4 s apart) and never come
// sooner than the answer's Retry-After.
func TestNextPoll(t *testing.T) {
	for _, c := range []struct {
		delay time.Duration
		hint  string
		want  time.Duration
	}{
		{300 * time.Millisecond, "", 480 * time.Millisecond},
		{300 * time.Millisecond, "4", 4 * time.Second},
		{3 * time.Second, "", 4 * time.Second},
		{3 * time.Second, "2", 4 * time.Second},
		{4 * time.Second, "7", 7 * time.Second},
		{300 * time.Millisecond, "soon", 480 * time.Millisecond},
	} {
		if got := nextPoll(c.delay, c.hint); got != c.want {
			t.Errorf("nextPoll(%v, %q) = %v, want %v", c.delay, c.hint, got, c.want)
		}
	}
}

// The raw poller reads the hint's inputs from the item as the API does from
// its request (asyncevent.PollAfter, asyncevent.RetryAfter): an arrival
// candidate until MaxLateness after its queuedAt, rounded up to a whole
// second; nothing for anything else.
func TestRawRetryAfter(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	item := func(status, phase string, queuedAt int64) map[string]dtypes.AttributeValue {
		m := map[string]dtypes.AttributeValue{"status": str(status), "uiPhase": str(phase)}
		if queuedAt != 0 {
			m["queuedAt"] = &dtypes.AttributeValueMemberN{Value: strconv.FormatInt(queuedAt, 10)}
		}
		return m
	}
	at := now.UnixMilli()
	for _, c := range []struct {
		name string
		item map[string]dtypes.AttributeValue
		want string
	}{
		{"candidate just queued", item("PROCESSING", "ALLOCATING", at), "4"},
		{"candidate queued 1.2 s ago", item("PROCESSING", "ALLOCATING", at-1200), "3"},
		{"candidate past the watermark", item("PROCESSING", "ALLOCATING", at-3500), ""},
		{"queued", item("QUEUED", "", at), ""},
		{"candidate without queuedAt", item("PROCESSING", "ALLOCATING", 0), ""},
	} {
		if got := rawRetryAfter(c.item, now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
