package asynceventapi

import (
	"strings"
	"testing"
)

// A poll's tag is the caller's and the request's alone: only the tag the
// server issued to this caller for this request, unaltered, yields its
// pollAt (and with it a 304 without a read); the view's hash decides
// whether a read matches.
func TestPollTags(t *testing.T) {
	tags := newPollTags([]byte("a key of thirty-two bytes or so.."))
	view := RequestView{RequestID: "r1", Status: "PROCESSING", UIPhase: "ALLOCATING", QueuedAt: 1000}
	tag := tags.tag("u1", "r1", 4500, view)
	if tag != tags.tag("u1", "r1", 4500, view) {
		t.Fatal("the same view read twice has two tags")
	}
	if got, at := tags.pollAt("u1", "r1", tag); got != tag || at != 4500 {
		t.Fatalf("pollAt of its own tag: %q %d, want %q 4500", got, at, tag)
	}
	changed := view
	changed.Status = "SUCCEEDED"
	for name, other := range map[string]string{
		"view changed":        tags.tag("u1", "r1", 4500, changed),
		"another caller":      tags.tag("u2", "r1", 4500, view),
		"another request":     tags.tag("u1", "r2", 4500, view),
		"another key":         newPollTags([]byte("another key")).tag("u1", "r1", 4500, view),
		"another pollAt":      tags.tag("u1", "r1", 4501, view),
		"a different version": tags.tag("u1", "r1", 0, view),
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
		if _, at := tags.pollAt("u1", "r1", inm); at != 4500 {
			t.Errorf("If-None-Match %q: pollAt %d, want 4500", inm, at)
		}
	}
	// Presented by someone else, altered or made up: no pollAt.
	parts := strings.Split(strings.Trim(tag, `"`), ".")
	for name, c := range map[string]struct{ caller, req, inm string }{
		"another caller":  {"u2", "r1", tag},
		"another request": {"u1", "r2", tag},
		"pollAt moved":    {"u1", "r1", `"zzzz.` + parts[1] + "." + parts[2] + `"`},
		"hash changed":    {"u1", "r1", `"` + parts[0] + ".AAAAAAAAAAAAAAAA." + parts[2] + `"`},
		"star":            {"u1", "r1", "*"},
		"empty":           {"u1", "r1", `""`},
		"garbage":         {"u1", "r1", `"...."`},
		"negative pollAt": {"u1", "r1", `"-1.` + parts[1] + "." + parts[2] + `"`},
		"too long":        {"u1", "r1", `"` + strings.Repeat("a", 100) + "." + parts[1] + "." + parts[2] + `"`},
	} {
		if _, at := tags.pollAt(c.caller, c.req, c.inm); at != 0 {
			t.Errorf("%s: pollAt %d from %q, want none", name, at, c.inm)
		}
	}
	// A tag without a pollAt (not a candidate) never skips the read.
	plain := tags.tag("u1", "r1", 0, view)
	if _, at := tags.pollAt("u1", "r1", plain); at != 0 {
		t.Errorf("a tag with pollAt 0 yields %d", at)
	}
}
