package ddb_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// Run a fuzz target for a while with, e.g.:
//
//	go test -run '^$' -fuzz FuzzFormatRoundTrip -fuzztime 10s ./sdk/ddb
//
// Plain `go test` runs the seed corpus (the f.Add calls and testdata/fuzz).

// fuzzFormats cover one, two and three placeholders, leading and trailing
// literals, and a layout that starts with a placeholder.
var fuzzFormats = []*ddb.Format{
	ddb.MustFormat("REQ#{requestId}"),
	ddb.MustFormat("IDEMP#{eventId}#{userId}"),
	ddb.MustFormat("ORG#{orgId}#EVT#{eventId}"),
	ddb.MustFormat("QAT#{queuedAt}#REQ#{requestId}"),
	ddb.MustFormat("BIB#{bib}#PHOTO#{ulid}"),
	ddb.MustFormat("{a}#X#{b}#{c}"),
}

func fuzzSeeds(f *testing.F) {
	seeds := [][3]string{
		{"r1", "u1", "e1"},
		{"a#b", "c", "d"},
		{"a", "b#c", "d"},
		{"%", "%25", "%23"},
		{"#", "##", ""},
		{"", "", ""},
		{"1718000000050", "01J9Z3Q4X8", "x"},
		{"한글", "\x00\xff", "%2"},
		{"REQ#x", "EVT", "#X#"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
}

func values(f *ddb.Format, a, b, c string) []string {
	return []string{a, b, c}[:len(f.Vars())]
}

// FuzzFormatRoundTrip: Parse(Build(v)) == v for any values, and
// Build(Parse(s)) == s for any string Parse accepts.
func FuzzFormatRoundTrip(f *testing.F) {
	fuzzSeeds(f)
	f.Add("REQ#abc", "IDEMP#e#u", "QAT#0000000000001#REQ#r%23x")
	f.Add("ORG#o%25#EVT#e", "BIB#%2#PHOTO#p", "a#X#b#c")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, fm := range fuzzFormats {
			v := values(fm, a, b, c)
			key := fm.Build(v...)
			got, err := fm.Parse(key)
			if err != nil {
				t.Fatalf("%s: Parse(Build(%q)) = %v", fm, v, err)
			}
			if !slices.Equal(got, v) {
				t.Fatalf("%s: Parse(Build(%q)) = %q", fm, v, got)
			}
			// Any of the three strings as a key: accepted means canonical.
			for _, s := range []string{a, b, c} {
				vs, err := fm.Parse(s)
				if err != nil {
					if !errors.Is(err, ddb.ErrKeyFormat) {
						t.Fatalf("%s: Parse(%q) error is not ErrKeyFormat: %v", fm, s, err)
					}
					continue
				}
				if back := fm.Build(vs...); back != s {
					t.Fatalf("%s: Build(Parse(%q)) = %q", fm, s, back)
				}
			}
		}
	})
}

// FuzzFormatNoCollision: two different value lists never build the same
// key in one format.
func FuzzFormatNoCollision(f *testing.F) {
	f.Add("a#b", "c", "a", "b#c")
	f.Add("a", "b%23c", "a", "b#c")
	f.Add("%23", "", "#", "")
	f.Add("", "#", "#", "")
	f.Add("x", "y", "x", "y")
	f.Add("%2523", "q", "%23", "q")
	f.Fuzz(func(t *testing.T, a1, b1, a2, b2 string) {
		for _, fm := range fuzzFormats {
			v1 := values(fm, a1, b1, "z")
			v2 := values(fm, a2, b2, "z")
			if slices.Equal(v1, v2) {
				continue
			}
			if k := fm.Build(v1...); k == fm.Build(v2...) {
				t.Fatalf("%s: %q and %q both build %q", fm, v1, v2, k)
			}
			// A prefix of one event must not cover another event's keys.
			p := fm.Prefix(v1[0])
			k2 := fm.Build(v2...)
			if v1[0] != v2[0] && p != "" && len(k2) >= len(p) && k2[:len(p)] == p && len(fm.Vars()) > 1 {
				t.Fatalf("%s: Prefix(%q) = %q covers %q built from %q", fm, v1[0], p, k2, v2)
			}
		}
	})
}
