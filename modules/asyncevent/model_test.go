package asyncevent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"e1": true, "01HZX3Y2ABCDEF": true, "a_b-c": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "a#b": false, "a%23": false, "a\nb": false, "a b": false, "ü": false, "a/b": false,
	} {
		if got := asyncevent.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestLifecycle(t *testing.T) {
	S := func(s string) asyncevent.Status { return asyncevent.Status(s) }
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"RECEIVED", "QUEUED", true}, {"RECEIVED", "PROCESSING", true}, {"RECEIVED", "FAILED_FINAL", true},
		{"QUEUED", "PROCESSING", true}, {"QUEUED", "FAILED_FINAL", true},
		{"PROCESSING", "SUCCEEDED", true}, {"PROCESSING", "REJECTED", true}, {"PROCESSING", "FAILED_FINAL", true},
		{"RECEIVED", "SUCCEEDED", false}, {"QUEUED", "REJECTED", false}, {"QUEUED", "RECEIVED", false},
		{"SUCCEEDED", "PROCESSING", false}, {"REJECTED", "SUCCEEDED", false}, {"FAILED_FINAL", "QUEUED", false},
	} {
		if got := S(c.from).CanMoveTo(S(c.to)); got != c.ok {
			t.Errorf("%s → %s: %v, want %v", c.from, c.to, got, c.ok)
		}
	}
	for _, s := range asyncevent.Statuses {
		want := s == asyncevent.StatusSucceeded || s == asyncevent.StatusRejected || s == asyncevent.StatusFailedFinal
		if s.Terminal() != want {
			t.Errorf("%s.Terminal() = %v", s, !want)
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	m := asyncevent.Message{RequestID: "r1", EventID: "e1", UserID: "u1", EventType: asyncevent.FirstCome}
	got, err := asyncevent.DecodeMessage(m.Encode())
	if err != nil || got.RequestID != "r1" || got.V != 1 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, body := range []string{
		"", "{", "null", `{"v":2,"requestId":"r","eventId":"e","userId":"u","eventType":"LOTTERY"}`,
		`{"v":1,"requestId":"r#1","eventId":"e","userId":"u","eventType":"LOTTERY"}`,
		`{"v":1,"requestId":"r","eventId":"e","userId":"u","eventType":"RAFFLE"}`,
	} {
		if _, err := asyncevent.DecodeMessage(body); !errors.Is(err, asyncevent.ErrBadMessage) {
			t.Errorf("DecodeMessage(%q) = %v, want ErrBadMessage", body, err)
		}
	}
}

func TestDelays(t *testing.T) {
	r := asyncevent.Request{QueuedAt: 1000, StartedAt: 1250, FinishedAt: 1400}
	if r.QueueDelay() != 250 || r.E2EDelay() != 400 {
		t.Fatalf("delays %d %d", r.QueueDelay(), r.E2EDelay())
	}
	if (&asyncevent.Request{QueuedAt: 1000}).E2EDelay() != 0 {
		t.Fatal("unfinished request has an e2e delay")
	}
}
