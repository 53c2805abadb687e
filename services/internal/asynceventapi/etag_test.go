package asynceventapi

import (
	"strings"
	"testing"
)

// A poll's tag is the caller's and the request's alone: only the tag the
// server issued to this caller for this request, unaltered, yields its
// pollAt, event and place version (and with them a 304 without a read);
// the view's hash decides whether a read matches.
func TestPollTags(t *testing.T) {
	tags := newPollTags([]byte("a key of thirty-two bytes or so.."))
	view := RequestView{RequestID: "r1", Status: "PROCESSING", UIPhase: "ALLOCATING", QueuedAt: 1000}
	g := tagged{pollAt: 4500, event: "e-1_x", placeVers: "k3-1a"}
	with := func(f func(*tagged)) tagged { h := g; f(&h); return h }
	tag := tags.tag("u1", "r1", g, view)
	if tag != tags.tag("u1", "r1", g, view) {
		t.Fatal("the same view read twice has two tags")
	}
	if got, h, ok := tags.parse("u1", "r1", tag); got != tag || !ok || h != g {
		t.Fatalf("parse of its own tag: %q %+v %v, want %q %+v", got, h, ok, tag, g)
	}
	changed := view
	changed.Status = "SUCCEEDED"
	for name, other := range map[string]string{
		"view changed":        tags.tag("u1", "r1", g, changed),
		"another caller":      tags.tag("u2", "r1", g, view),
		"another request":     tags.tag("u1", "r2", g, view),
		"another key":         newPollTags([]byte("another key")).tag("u1", "r1", g, view),
		"another pollAt":      tags.tag("u1", "r1", with(func(h *tagged) { h.pollAt++ }), view),
		"another line":        tags.tag("u1", "r1", with(func(h *tagged) { h.placeVers = "k4-1a" }), view),
		"another event":       tags.tag("u1", "r1", with(func(h *tagged) { h.event = "e2" }), view),
		"a different version": tags.tag("u1", "r1", with(func(h *tagged) { h.pollAt = 0 }), view),
	} {
		if other == tag || matches(other, tag) {
			t.Errorf("%s: same tag %s", name, tag)
		}
	}
	// Presented back: weak, in a list, with spaces, all match.
	for _, inm := range []string{tag, "W/" + tag, `"x", ` + tag, " " + tag + " "} {
		if !matches(inm, tag) {
			t.Errorf("If-None-Match %q does not match %s", inm, tag)
		}
		if _, h, ok := tags.parse("u1", "r1", inm); !ok || h != g {
			t.Errorf("If-None-Match %q: %+v %v, want %+v", inm, h, ok, g)
		}
	}
	// Presented by someone else, altered or made up: no pollAt.
	parts := strings.Split(strings.Trim(tag, `"`), ".")
	rest := "." + parts[1] + "." + parts[2] + "." + parts[3] + "." + parts[4]
	for name, c := range map[string]struct{ caller, req, inm string }{
		"another caller":  {"u2", "r1", tag},
		"another request": {"u1", "r2", tag},
		"pollAt moved":    {"u1", "r1", `"zzzz` + rest + `"`},
		"line moved":      {"u1", "r1", `"` + parts[0] + "." + parts[1] + ".k4-1a." + parts[3] + "." + parts[4] + `"`},
		"hash changed":    {"u1", "r1", `"` + parts[0] + "." + parts[1] + "." + parts[2] + ".AAAAAAAAAAAAAAAA." + parts[4] + `"`},
		"star":            {"u1", "r1", "*"},
		"empty":           {"u1", "r1", `""`},
		"garbage":         {"u1", "r1", `"...."`},
		"negative pollAt": {"u1", "r1", `"-1` + rest + `"`},
		"too long":        {"u1", "r1", `"` + strings.Repeat("a", 200) + rest + `"`},
	} {
		if _, h, ok := tags.parse(c.caller, c.req, c.inm); ok {
			t.Errorf("%s: %+v from %q, want none", name, h, c.inm)
		}
	}
	// A tag without a pollAt (not a candidate) never skips the read.
	plain := tags.tag("u1", "r1", with(func(h *tagged) { h.pollAt = 0 }), view)
	if _, h, ok := tags.parse("u1", "r1", plain); ok {
		t.Errorf("a tag with pollAt 0 yields %+v", h)
	}
}
