package ratelimit_test

import (
	"testing"
	"time"

	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// A user's budget is shared by the replicas: with 2, one replica lets a
// user make half the burst at once, then half the rate; another user and
// another class are not touched; a call refused by the address's bucket
// takes nothing from the user's.
func TestBuckets(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	var refused []string
	l := ratelimit.New(ratelimit.Config{
		Rules: map[string]map[ratelimit.By]ratelimit.Rule{
			"poll":        {ratelimit.ByUser: {Rate: 4, Burst: 8}, ratelimit.ByAddress: {Rate: 10, Burst: 10}},
			"participate": {ratelimit.ByUser: {Rate: 1, Burst: 2}},
		},
		Replicas: 2, Now: c.now,
		Refused: func(class string, by ratelimit.By) { refused = append(refused, class+"/"+string(by)) },
	})
	for i := range 4 { // the user's half of a burst of 8
		if ok, _ := l.Allow("poll", "u1", "10.0.0.1"); !ok {
			t.Fatalf("poll %d refused within the burst", i)
		}
	}
	ok, after := l.Allow("poll", "u1", "10.0.0.1")
	if ok || after != 500*time.Millisecond {
		t.Fatalf("the 5th poll: ok %v, retry after %v; want refused for 0.5 s (2 a second on this replica)", ok, after)
	}
	if ok, _ := l.Allow("poll", "u2", "10.0.0.1"); !ok {
		t.Error("another user's poll refused")
	}
	if ok, _ := l.Allow("participate", "u1", "10.0.0.1"); !ok {
		t.Error("another class refused")
	}
	c.t = c.t.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("poll", "u1", "10.0.0.1"); !ok {
		t.Error("refused after waiting what it said")
	}
	// The address's bucket (5 on this replica, 5 a second) holds 1.5 now:
	// 6 polls taken, 2.5 refilled. u3's poll takes one; u4's is refused
	// by it and leaves u4's own bucket whole.
	if ok, _ := l.Allow("poll", "u3", "10.0.0.1"); !ok {
		t.Fatal("u3's poll refused with a token left at its address")
	}
	if ok, _ := l.Allow("poll", "u4", "10.0.0.1"); ok {
		t.Fatal("a poll past the address's bucket allowed")
	}
	for i := range 4 {
		if ok, _ := l.Allow("poll", "u4", "10.0.0.2"); !ok {
			t.Fatalf("u4's poll %d from another address refused: the refused call took a token", i)
		}
	}
	if len(refused) != 2 || refused[0] != "poll/user" || refused[1] != "poll/address" {
		t.Errorf("refusals heard: %v", refused)
	}
	if l.Limits("drain") || !l.Limits("poll") {
		t.Error("Limits says otherwise")
	}
	if ok, _ := l.Allow("drain", "u1", "10.0.0.1"); !ok {
		t.Error("a class without a budget refused")
	}
}

// AllowRule keeps a bucket per key with the rule it is given (a budget
// that is not the deployment's, like an event's own), shared by the
// replicas as Config.Rules' are; the zero Rule allows everything.
func TestAllowRule(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	var refused []string
	l := ratelimit.New(ratelimit.Config{Replicas: 2, Now: c.now,
		Refused: func(class string, by ratelimit.By) { refused = append(refused, class+"/"+string(by)) }})
	rule := ratelimit.Rule{Rate: 6.0 / 60, Burst: 6} // 6/m: 3 at once on each of 2 replicas
	for i := range 3 {
		if ok, _ := l.AllowRule("participate", ratelimit.ByEventAddress, "e1 10.0.0.1", rule); !ok {
			t.Fatalf("call %d refused within the replica's burst of 3", i)
		}
	}
	ok, after := l.AllowRule("participate", ratelimit.ByEventAddress, "e1 10.0.0.1", rule)
	if ok || after != 20*time.Second {
		t.Fatalf("the 4th call: ok %v, retry after %v; want refused for 20 s (3 a minute on this replica)", ok, after)
	}
	if ok, _ := l.AllowRule("participate", ratelimit.ByEventAddress, "e2 10.0.0.1", rule); !ok {
		t.Error("another key refused")
	}
	if ok, _ := l.AllowRule("participate", ratelimit.ByEventAddress, "e1 10.0.0.1", ratelimit.Rule{}); !ok {
		t.Error("the zero Rule refused")
	}
	c.t = c.t.Add(20 * time.Second)
	if ok, _ := l.AllowRule("participate", ratelimit.ByEventAddress, "e1 10.0.0.1", rule); !ok {
		t.Error("refused after waiting what it said")
	}
	if len(refused) != 1 || refused[0] != "participate/event_address" {
		t.Errorf("refusals heard: %v", refused)
	}
}

// Past MaxBuckets the buckets that are full again go first; a dropped
// bucket starts full (the limit fails open).
func TestEviction(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	l := ratelimit.New(ratelimit.Config{Rules: map[string]map[ratelimit.By]ratelimit.Rule{"poll": {ratelimit.ByUser: {Rate: 1, Burst: 1}}},
		MaxBuckets: 3, Now: c.now})
	for _, u := range []string{"a", "b", "c", "d", "e"} {
		if ok, _ := l.Allow("poll", u, ""); !ok {
			t.Fatalf("%s refused", u)
		}
		c.t = c.t.Add(400 * time.Millisecond)
	}
	if ok, _ := l.Allow("poll", "e", ""); ok {
		t.Error("e's second poll at once allowed: its bucket was dropped while in use")
	}
}

func TestParseRule(t *testing.T) {
	for in, want := range map[string]ratelimit.Rule{
		"2/s": {Rate: 2, Burst: 2}, "30/m": {Rate: 0.5, Burst: 30}, "3600/h": {Rate: 1, Burst: 3600}, "off": {}, "": {},
	} {
		got, err := ratelimit.ParseRule(in)
		if err != nil || got != want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if in != "" && got.String() != in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), in)
		}
	}
	for _, bad := range []string{"2", "0/s", "-1/s", "2/d", "x/s", "2/", "1.5/s"} {
		if _, err := ratelimit.ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		}
	}
}

// The client's address is the connection's, unless that is a trusted
// proxy: then the rightmost forwarded address that is not one. Whatever a
// client writes to the left of what the proxies appended changes nothing.
func TestClientAddr(t *testing.T) {
	ps, err := ratelimit.ParseProxies("10.0.0.0/16, 192.168.1.7")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ remote, xff, want string }{
		{"203.0.113.9:5555", "", "203.0.113.9"},
		{"203.0.113.9:5555", "1.2.3.4", "203.0.113.9"}, // not from a proxy: the header is the client's own
		{"10.0.3.4:80", "198.51.100.2", "198.51.100.2"},
		{"10.0.3.4:80", "1.1.1.1, 198.51.100.2", "198.51.100.2"}, // the spoofed hop is left of the real one
		{"10.0.3.4:80", "198.51.100.2, 192.168.1.7", "198.51.100.2"},
		{"10.0.3.4:80", "", "10.0.3.4"},
		{"10.0.3.4:80", "garbage, 10.0.9.9", "10.0.9.9"},
		{"[2001:db8:1:2:3:4:5:6]:443", "", "2001:db8:1:2::/64"},
		{"[::ffff:203.0.113.9]:1", "", "203.0.113.9"},
		{"not an address", "", ""},
	} {
		if got := ps.ClientAddr(c.remote, c.xff); got != c.want {
			t.Errorf("ClientAddr(%q, %q) = %q, want %q", c.remote, c.xff, got, c.want)
		}
	}
	// ClientIP is the same client, its whole address.
	if got := ps.ClientIP("[2001:db8:1:2:3::9]:443", ""); got != "2001:db8:1:2:3::9" {
		t.Errorf("ClientIP of an IPv6 peer = %q, want its whole address", got)
	}
	if got := ps.ClientIP("10.0.3.4:80", "1.1.1.1, 198.51.100.2"); got != "198.51.100.2" {
		t.Errorf("ClientIP behind a proxy = %q, want 198.51.100.2", got)
	}
	if got := ps.ClientIP("not an address", ""); got != "" {
		t.Errorf("ClientIP of garbage = %q", got)
	}
	if _, err := ratelimit.ParseProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad prefix accepted")
	}
	if _, err := ratelimit.ParseProxies("nope"); err == nil {
		t.Error("a bad address accepted")
	}
}
