package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// What a problem+json response may echo of the request. Huma echoes the
// offending value in errors[].value, whole and once per error: an
// "unexpected property" error carries the whole object around it, so seven
// unknown properties next to a 1 MB string would come back as 7 MB. Every
// problem an API built by NewAPI answers (validation errors, huma.ErrorNNN,
// WriteErr, a service's domain problems) is clipped to these bounds, at
// any depth, by clipProblems, which keeps a response to a few KB whatever
// the request held.
const (
	// MaxEchoedValue bounds an echoed string, and an echoed object key, in
	// bytes (cut on a rune boundary, with the full length appended).
	MaxEchoedValue = 64
	// MaxEchoedItems bounds the elements of an echoed list and the keys of
	// an echoed object; the rest is summarised.
	MaxEchoedItems = 8
	// MaxEchoedDepth bounds how deep an echoed value nests: a list or
	// object deeper than this is replaced by a summary ("object with 3
	// keys").
	MaxEchoedDepth = 3
	// MaxEchoedErrors bounds the errors[] of one response; one more entry
	// says how many were left out.
	MaxEchoedErrors = 10
	// echoBudget is how many bytes of values all errors of one response may
	// echo together; once spent, values are replaced by summaries.
	echoBudget = 1024
	// maxMessage and maxLocation bound an error's message and location
	// (a location names the request's keys, which the client chose), and
	// maxDetail the problem's detail.
	maxMessage, maxLocation, maxDetail = 200, 128, 512
)

// clipProblems is the response transformer that bounds every problem an
// API answers: it moves strictJSON refusals to the location they name
// (describeBodyError), then clips (clipProblem). It works on a copy, so a
// problem value a handler shares is left as it is.
func clipProblems(_ huma.Context, _ string, v any) (any, error) {
	m, ok := v.(*huma.ErrorModel)
	if !ok || m == nil {
		return v, nil
	}
	c := *m
	c.Errors = make([]*huma.ErrorDetail, len(m.Errors))
	for i, d := range m.Errors {
		if d != nil {
			dc := *d
			describeBodyError(&dc)
			c.Errors[i] = &dc
		}
	}
	clipProblem(&c)
	return &c, nil
}

// bodyErrorText matches a bodyError's text: one of strictJSON's fixed
// messages, then the location, which is the rest (a key may hold any
// character, spaces and parentheses included).
var bodyErrorText = func() *regexp.Regexp {
	alts := []string{regexp.QuoteMeta(msgNotUTF8) + ` \(first invalid byte at offset \d+\)`}
	for _, m := range []string{msgSurrogate, msgDuplicate, msgTooDeep, msgInteger, msgNumber, msgOtherType} {
		alts = append(alts, regexp.QuoteMeta(m))
	}
	return regexp.MustCompile(`(?s)^(` + strings.Join(alts, "|") + `) \(at (body.*)\)$`)
}()

// describeBodyError moves a strictJSON refusal, which Huma reports at
// "body", to the location it names, and echoes no value: the body is what
// it refused.
func describeBodyError(d *huma.ErrorDetail) {
	if d == nil || d.Location != "body" {
		return
	}
	if m := bodyErrorText.FindStringSubmatch(d.Message); m != nil {
		d.Message, d.Location, d.Value = m[1], m[2], nil
	}
}

// clipProblem bounds what m echoes: its detail, how many errors it lists,
// and each error's message, location and value.
func clipProblem(m *huma.ErrorModel) {
	m.Detail = clipString(m.Detail, maxDetail)
	if n := len(m.Errors); n > MaxEchoedErrors {
		m.Errors = append(m.Errors[:MaxEchoedErrors:MaxEchoedErrors],
			&huma.ErrorDetail{Message: fmt.Sprintf("and %d more errors", n-MaxEchoedErrors)})
	}
	c := clipper{left: echoBudget}
	for _, d := range m.Errors {
		if d == nil {
			continue
		}
		d.Message = clipString(d.Message, maxMessage)
		d.Location = clipString(d.Location, maxLocation)
		d.Value = c.clip(d.Value, 0)
	}
}

// clipString cuts s to at most max bytes on a rune boundary and says how
// long it was.
func clipString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

// clipper clips values against a byte budget shared by one response.
type clipper struct{ left int }

// clip returns v bounded by the MaxEchoed limits, at nesting depth depth.
// Values from a JSON body are nil, bool, float64, string, []any and
// map[string]any; other types (parameters, domain values) go through JSON
// to be clipped the same way.
func (c *clipper) clip(v any, depth int) any {
	switch x := v.(type) {
	case nil, bool, float64, json.Number:
		c.left -= 8
		return x
	case string:
		if c.left <= 0 {
			return fmt.Sprintf("(%d bytes)", len(x))
		}
		s := clipString(x, MaxEchoedValue)
		c.left -= len(s)
		return s
	case []any:
		if depth >= MaxEchoedDepth || c.left <= 0 {
			return fmt.Sprintf("array of %d items", len(x))
		}
		c.left -= 2
		out := make([]any, 0, min(len(x), MaxEchoedItems)+1)
		for _, e := range x[:min(len(x), MaxEchoedItems)] {
			out = append(out, c.clip(e, depth+1))
		}
		if len(x) > MaxEchoedItems {
			out = append(out, fmt.Sprintf("… (%d items)", len(x)))
		}
		return out
	case map[string]any:
		if depth >= MaxEchoedDepth || c.left <= 0 {
			return fmt.Sprintf("object with %d keys", len(x))
		}
		c.left -= 2
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make(map[string]any, min(len(x), MaxEchoedItems)+1)
		for _, k := range keys[:min(len(keys), MaxEchoedItems)] {
			ck := clipString(k, MaxEchoedValue)
			c.left -= len(ck)
			if _, dup := out[ck]; !dup { // two long keys may share their first bytes
				out[ck] = c.clip(x[k], depth+1)
			}
		}
		if len(x) > MaxEchoedItems {
			out["…"] = fmt.Sprintf("%d more keys", len(x)-MaxEchoedItems)
		}
		return out
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		c.left -= 8
		return v
	}
	// Anything else (a []string parameter, a domain struct): clip its JSON.
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(a %T)", v)
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return fmt.Sprintf("(a %T)", v)
	}
	return c.clip(generic, depth)
}
