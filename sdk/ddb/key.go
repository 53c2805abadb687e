package ddb

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Key is an item's primary key: the partition and sort key values.
type Key struct {
	PK string
	SK string
}

// Delimiter separates the segments of a composite key.
const Delimiter = "#"

// ErrKeyFormat reports a key string that does not match its Format.
var ErrKeyFormat = errors.New("ddb: key does not match format")

// Format is a composite key layout such as "IDEMP#{eventId}#{userId}":
// segments separated by '#', each either a literal or a {placeholder}.
//
// Build writes each value with '%' escaped as "%25" and '#' as "%23". For
// ordinary ids (no '#' or '%') the key is exactly the layout with the values
// filled in. Because no escaped value contains '#', a value can never forge
// another segment, two different value lists never produce the same key, and
// Parse recovers the values exactly. Parse is strict: it rejects any '%' that
// is not one of the two escapes, so Build(Parse(s)) == s for every key it
// accepts.
type Format struct {
	layout   string
	segments []segment
	vars     []string
}

type segment struct {
	literal string
	slot    int // index into values, or -1 for a literal
}

// NewFormat parses a layout. Placeholders must be whole segments.
func NewFormat(layout string) (*Format, error) {
	f := &Format{layout: layout}
	for _, s := range strings.Split(layout, Delimiter) {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && len(s) > 2 {
			f.segments = append(f.segments, segment{slot: len(f.vars)})
			f.vars = append(f.vars, s[1:len(s)-1])
			continue
		}
		if strings.ContainsAny(s, "{}%") {
			return nil, fmt.Errorf("ddb: layout %q: segment %q must be a literal or a whole {placeholder}", layout, s)
		}
		f.segments = append(f.segments, segment{literal: s, slot: -1})
	}
	return f, nil
}

// MustFormat is NewFormat that panics on a bad layout; for package-level vars.
func MustFormat(layout string) *Format {
	f, err := NewFormat(layout)
	if err != nil {
		panic(err)
	}
	return f
}

// String returns the layout.
func (f *Format) String() string { return f.layout }

// Vars returns the placeholder names in order.
func (f *Format) Vars() []string { return append([]string(nil), f.vars...) }

// Build fills the placeholders with values, escaping each. It panics if the
// number of values differs from the number of placeholders: that is a
// programming error, not bad input.
func (f *Format) Build(values ...string) string {
	if len(values) != len(f.vars) {
		panic(fmt.Sprintf("ddb: format %q takes %d values, got %d", f.layout, len(f.vars), len(values)))
	}
	return f.build(values, len(f.segments))
}

// Prefix builds the key up to and including the delimiter after the last of
// the given leading values, for begins_with conditions: with layout
// "EVT#{eventId}#TIME#{createdAt}", Prefix("e1") is "EVT#e1#TIME#", and
// Prefix() is "EVT#". Literal segments after the last value are included up
// to the next placeholder.
func (f *Format) Prefix(values ...string) string {
	if len(values) > len(f.vars) {
		panic(fmt.Sprintf("ddb: format %q takes at most %d values, got %d", f.layout, len(f.vars), len(values)))
	}
	// Find the index of the placeholder that would take the next value.
	end := len(f.segments)
	seen := 0
	for i, s := range f.segments {
		if s.slot >= 0 {
			if seen == len(values) {
				end = i
				break
			}
			seen++
		}
	}
	if end == len(f.segments) {
		return f.build(values, end)
	}
	if end == 0 {
		// The layout starts with a placeholder: no prefix is known.
		return ""
	}
	return f.build(values, end) + Delimiter
}

func (f *Format) build(values []string, nseg int) string {
	n := 0
	for i := 0; i < nseg; i++ {
		s := f.segments[i]
		if s.slot >= 0 {
			n += len(values[s.slot]) + 4
		} else {
			n += len(s.literal)
		}
		n++
	}
	var b strings.Builder
	b.Grow(n)
	for i := 0; i < nseg; i++ {
		if i > 0 {
			b.WriteString(Delimiter)
		}
		s := f.segments[i]
		if s.slot >= 0 {
			escapeTo(&b, values[s.slot])
		} else {
			b.WriteString(s.literal)
		}
	}
	return b.String()
}

// Parse splits a key built by Build back into its values.
func (f *Format) Parse(key string) ([]string, error) {
	parts := strings.Split(key, Delimiter)
	if len(parts) != len(f.segments) {
		return nil, fmt.Errorf("%w: %q has %d segments, %q has %d", ErrKeyFormat, key, len(parts), f.layout, len(f.segments))
	}
	values := make([]string, len(f.vars))
	for i, s := range f.segments {
		if s.slot < 0 {
			if parts[i] != s.literal {
				return nil, fmt.Errorf("%w: %q: segment %d is %q, want %q", ErrKeyFormat, key, i, parts[i], s.literal)
			}
			continue
		}
		v, err := unescape(parts[i])
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrKeyFormat, key, err)
		}
		values[s.slot] = v
	}
	return values, nil
}

// Escape returns v with '%' written as "%25" and '#' as "%23".
func Escape(v string) string {
	if !strings.ContainsAny(v, "#%") {
		return v
	}
	var b strings.Builder
	escapeTo(&b, v)
	return b.String()
}

func escapeTo(b *strings.Builder, v string) {
	if !strings.ContainsAny(v, "#%") {
		b.WriteString(v)
		return
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '%':
			b.WriteString("%25")
		case '#':
			b.WriteString("%23")
		default:
			b.WriteByte(v[i])
		}
	}
}

// Unescape reverses Escape. It rejects any '%' not followed by "25" or "23".
func Unescape(v string) (string, error) { return unescape(v) }

func unescape(v string) (string, error) {
	if !strings.Contains(v, "%") {
		return v, nil
	}
	var b strings.Builder
	b.Grow(len(v))
	for i := 0; i < len(v); i++ {
		if v[i] != '%' {
			b.WriteByte(v[i])
			continue
		}
		if i+2 >= len(v) {
			return "", fmt.Errorf("truncated escape at %d", i)
		}
		switch v[i+1 : i+3] {
		case "25":
			b.WriteByte('%')
		case "23":
			b.WriteByte('#')
		default:
			return "", fmt.Errorf("bad escape %q at %d", v[i:i+3], i)
		}
		i += 2
	}
	return b.String(), nil
}

// EpochMillisWidth is the width of epoch-millisecond key parts: 13 digits,
// the natural width of every date from 2001 to 2286 (Millis pads earlier
// ones), so that key parts sort as the times do.
const EpochMillisWidth = 13

// Millis formats epoch milliseconds as a fixed-width, zero-padded decimal,
// so that keys sort by time. Negative values are clamped to zero.
func Millis(ms int64) string { return PadInt(ms, EpochMillisWidth) }

// PadInt formats n zero-padded to width digits (never truncated).
func PadInt(n int64, width int) string {
	if n < 0 {
		n = 0
	}
	s := strconv.FormatInt(n, 10)
	if len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}
