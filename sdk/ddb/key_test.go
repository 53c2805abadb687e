package ddb_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// The tables' key layouts (the AsyncEvent and PhotoService item keys),
// built from ordinary ids, are exactly the layout with the values filled in.
func TestFormatBuildsTheDocumentedKeys(t *testing.T) {
	cases := []struct {
		layout string
		values []string
		want   string
	}{
		{"REQ#{requestId}", []string{"01J9Z3Q4X8"}, "REQ#01J9Z3Q4X8"},
		{"IDEMP#{eventId}#{userId}", []string{"evt-1", "user-7"}, "IDEMP#evt-1#user-7"},
		{"ORG#{orgId}#EVT#{eventId}", []string{"acme", "seoul-2024"}, "ORG#acme#EVT#seoul-2024"},
		{"QAT#{queuedAt}#REQ#{requestId}", []string{ddb.Millis(1718000000050), "r1"}, "QAT#1718000000050#REQ#r1"},
		{"QAT#{queuedAt}#REQ#{requestId}", []string{ddb.Millis(5), "r1"}, "QAT#0000000000005#REQ#r1"},
		{"EVT#{eventId}#BIB#{bib}", []string{"e1", "1234"}, "EVT#e1#BIB#1234"},
		{"BIB#{bib}#PHOTO#{ulid}", []string{"1234", "01HZX0A1B2C3D4E5F6G7H8J9K0"}, "BIB#1234#PHOTO#01HZX0A1B2C3D4E5F6G7H8J9K0"},
		{"EVT#{eventId}#TIME#{createdAt}", []string{"e1", "2024-06-10T07:00:00.000Z"}, "EVT#e1#TIME#2024-06-10T07:00:00.000Z"},
		{"EVENT#{eventId}", []string{"e1"}, "EVENT#e1"},
		{"META", nil, "META"},
		{"LOG#{occurredAt}", []string{ddb.Millis(1718000000000)}, "LOG#1718000000000"},
	}
	for _, c := range cases {
		t.Run(c.layout, func(t *testing.T) {
			f, err := ddb.NewFormat(c.layout)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Build(c.values...); got != c.want {
				t.Fatalf("Build(%q) = %q, want %q", c.values, got, c.want)
			}
			got, err := f.Parse(c.want)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.want, err)
			}
			if !slices.Equal(got, c.values) && !(len(got) == 0 && len(c.values) == 0) {
				t.Fatalf("Parse(%q) = %q, want %q", c.want, got, c.values)
			}
		})
	}
}

// Values with the delimiter or the escape character are escaped, parse
// back, and cannot forge another segment.
func TestFormatEscapes(t *testing.T) {
	idemp := ddb.MustFormat("IDEMP#{eventId}#{userId}")
	cases := []struct {
		values []string
		want   string
	}{
		{[]string{"a#b", "c"}, "IDEMP#a%23b#c"},
		{[]string{"a", "b#c"}, "IDEMP#a#b%23c"},
		{[]string{"100%", "x"}, "IDEMP#100%25#x"},
		{[]string{"%23", "#"}, "IDEMP#%2523#%23"},
		{[]string{"", ""}, "IDEMP##"},
		{[]string{"한글", "tab\there"}, "IDEMP#한글#tab\there"},
	}
	for _, c := range cases {
		got := idemp.Build(c.values...)
		if got != c.want {
			t.Errorf("Build(%q) = %q, want %q", c.values, got, c.want)
			continue
		}
		back, err := idemp.Parse(got)
		if err != nil || !slices.Equal(back, c.values) {
			t.Errorf("Parse(%q) = %q, %v; want %q", got, back, err, c.values)
		}
	}
	// The classic forgery: ("a#b", "c") and ("a", "b#c") must differ.
	if idemp.Build("a#b", "c") == idemp.Build("a", "b#c") {
		t.Fatal("delimiter in a value forged a segment")
	}
}

func TestFormatParseRejects(t *testing.T) {
	qat := ddb.MustFormat("QAT#{queuedAt}#REQ#{requestId}")
	for _, key := range []string{
		"",
		"QAT#1",                  // too few segments
		"QAT#1#REQ#r1#extra",     // too many
		"QAX#1#REQ#r1",           // wrong literal
		"QAT#1#REQUEST#r1",       // wrong literal
		"QAT#1#REQ#r%",           // truncated escape
		"QAT#1#REQ#r%2",          // truncated escape
		"QAT#1#REQ#r%41",         // escape that Build never writes
		"QAT#%zz#REQ#r1",         // not an escape
		"qat#1#REQ#r1",           // literals are case-sensitive
		"QAT#1#REQ#r1#",          // trailing delimiter
		"#QAT#1#REQ#r1",          // leading delimiter
		"QAT#1%23#REQ#r1#REQ#r2", // segments counted after splitting
	} {
		if _, err := qat.Parse(key); !errors.Is(err, ddb.ErrKeyFormat) {
			t.Errorf("Parse(%q): want ErrKeyFormat, got %v", key, err)
		}
	}
}

func TestFormatPrefix(t *testing.T) {
	cases := []struct {
		layout string
		values []string
		want   string
	}{
		{"EVT#{eventId}#TIME#{createdAt}", nil, "EVT#"},
		{"EVT#{eventId}#TIME#{createdAt}", []string{"e1"}, "EVT#e1#TIME#"},
		{"EVT#{eventId}#TIME#{createdAt}", []string{"e1", "2024"}, "EVT#e1#TIME#2024"},
		{"BIB#{bib}#PHOTO#{ulid}", []string{"12"}, "BIB#12#PHOTO#"},
		{"QAT#{queuedAt}#REQ#{requestId}", nil, "QAT#"},
		{"ORG#{orgId}#EVT#{eventId}", []string{"a#b"}, "ORG#a%23b#EVT#"},
		{"{a}#{b}", nil, ""},
		{"{a}#{b}", []string{"x"}, "x#"},
		{"PHOTO", nil, "PHOTO"},
	}
	for _, c := range cases {
		f := ddb.MustFormat(c.layout)
		if got := f.Prefix(c.values...); got != c.want {
			t.Errorf("%s.Prefix(%q) = %q, want %q", c.layout, c.values, got, c.want)
		}
	}
	// A prefix for one event never matches another event's keys, even one
	// whose id starts with the same characters or carries a '#'.
	f := ddb.MustFormat("EVT#{eventId}#TIME#{createdAt}")
	p := f.Prefix("e1")
	for _, other := range []string{"e10", "e1#TIME", "e"} {
		k := f.Build(other, "t")
		if len(k) >= len(p) && k[:len(p)] == p {
			t.Errorf("prefix %q matches %q (event %q)", p, k, other)
		}
	}
}

func TestNewFormatRejectsBadLayouts(t *testing.T) {
	for _, layout := range []string{"A#{x}y", "A#x{y}", "A#{}", "A#100%", "A#{x"} {
		if _, err := ddb.NewFormat(layout); err == nil {
			t.Errorf("NewFormat(%q): want error", layout)
		}
	}
	f := ddb.MustFormat("IDEMP#{eventId}#{userId}")
	if got := f.Vars(); !slices.Equal(got, []string{"eventId", "userId"}) {
		t.Fatalf("Vars = %q", got)
	}
	if f.String() != "IDEMP#{eventId}#{userId}" {
		t.Fatalf("String = %q", f.String())
	}
}

func TestBuildPanicsOnWrongArity(t *testing.T) {
	f := ddb.MustFormat("IDEMP#{eventId}#{userId}")
	for _, values := range [][]string{nil, {"a"}, {"a", "b", "c"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Build(%q) did not panic", values)
				}
			}()
			f.Build(values...)
		}()
	}
}

func TestEscapeUnescape(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""}, {"plain", "plain"}, {"#", "%23"}, {"%", "%25"}, {"a#b%c", "a%23b%25c"}, {"%23", "%2523"},
	}
	for _, c := range cases {
		if got := ddb.Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if back, err := ddb.Unescape(c.want); err != nil || back != c.in {
			t.Errorf("Unescape(%q) = %q, %v", c.want, back, err)
		}
	}
	for _, bad := range []string{"%", "%2", "%24", "%%", "a%2"} {
		if _, err := ddb.Unescape(bad); err == nil {
			t.Errorf("Unescape(%q): want error", bad)
		}
	}
}

func TestMillisAndPadInt(t *testing.T) {
	cases := []struct {
		n     int64
		width int
		want  string
	}{
		{0, 13, "0000000000000"},
		{5, 13, "0000000000005"},
		{1718000000050, 13, "1718000000050"},
		{99999999999999, 13, "99999999999999"}, // wider than width: never truncated
		{-1, 13, "0000000000000"},              // clamped
		{42, 0, "42"},
		{42, 2, "42"},
		{42, 5, "00042"},
	}
	for _, c := range cases {
		if got := ddb.PadInt(c.n, c.width); got != c.want {
			t.Errorf("PadInt(%d, %d) = %q, want %q", c.n, c.width, got, c.want)
		}
	}
	if got := ddb.Millis(1718000000050); got != "1718000000050" || len(ddb.Millis(1)) != ddb.EpochMillisWidth {
		t.Fatalf("Millis = %q", got)
	}
	// Fixed width makes string order time order.
	times := []int64{1, 999, 1000, 1718000000000, 1718000000001, 9999999999999}
	for i := 1; i < len(times); i++ {
		if a, b := ddb.Millis(times[i-1]), ddb.Millis(times[i]); a >= b {
			t.Errorf("Millis(%d)=%q sorts after Millis(%d)=%q", times[i-1], a, times[i], b)
		}
	}
}
