package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// strictJSON is the JSON format of Pacer's APIs: encoding/json, except
// that a request body must be valid UTF-8 (with no unpaired \uD800-\uDFFF
// escape), must not repeat a key in an object, must nest at most
// MaxBodyDepth levels, and must hold no number beyond float64; and a value
// that passed the schema but does not fit its Go field (5e0 or 1.0 for an
// integer) is named by its place in the body. encoding/json alone would replace invalid bytes and unpaired
// surrogates with U+FFFD and keep the last of repeated keys, so
// {"capacity":-1,"capacity":5} would pass validation of one value and
// store the other, and a title of bytes FF FE would be stored as "��".
// (Keys that differ only in case are refused by the schema: see
// huma.ValidateStrictCasing in this package's init.)
var strictJSON = huma.Format{
	Marshal: huma.DefaultJSONFormat.Marshal,
	Unmarshal: func(data []byte, v any) error {
		// Huma decodes a body twice: into an any to validate it, then into
		// the input struct. The checks run on the first.
		if _, first := v.(*any); first {
			if !utf8.Valid(data) {
				return &bodyError{location: "body", message: fmt.Sprintf("%s (first invalid byte at offset %d)", msgNotUTF8, invalidUTF8(data))}
			}
			if err := checkBody(data); err != nil {
				return err
			}
		}
		// A type error on the second decode: a value that does not fit its
		// Go field (5e0 for an integer). Go's offset is just after the value.
		err := json.Unmarshal(data, v)
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &bodyError{location: pathAt(data, int(te.Offset)), message: typeMessage(te.Type)}
		}
		return err
	},
}

// strictJSONDescription tells API clients how bodies are read.
const strictJSONDescription = "**Request bodies are strict JSON:** UTF-8 (no unpaired `\\uD800`-`\\uDFFF` escapes), " +
	"case-sensitive keys that do not repeat within an object, at most 64 levels of nesting, numbers within float64, " +
	"and integers written as digits (`5`, not `5e0` or `5.0`). Anything else is a 400 or 422 problem naming the place."

// withStrictJSON returns formats with strictJSON for JSON. It copies the
// map: huma.DefaultConfig hands out huma.DefaultFormats itself, which
// every API in the process shares.
func withStrictJSON(formats map[string]huma.Format) map[string]huma.Format {
	formats = maps.Clone(formats)
	formats["application/json"] = strictJSON
	formats["json"] = strictJSON
	return formats
}

// MaxBodyDepth is how deeply a JSON request body may nest.
const MaxBodyDepth = 64

// The messages of strictJSON's refusals (describeBodyError matches them).
const (
	msgNotUTF8   = "the body is not valid UTF-8"
	msgSurrogate = `a \u escape is an unpaired UTF-16 surrogate (\uD800-\uDFFF)`
	msgDuplicate = "duplicate key: each key may appear once in an object"
	msgTooDeep   = "nested more than 64 levels deep" // MaxBodyDepth
	msgInteger   = "expected an integer written with digits only (no fraction or exponent) and within the field's range"
	msgNumber    = "expected a number within the field's range"
	msgOtherType = "expected a value of another type"
)

// bodyError is a strictJSON refusal. Huma reports it at location "body"
// with its text; describeBodyError moves it to its own location.
type bodyError struct{ location, message string }

func (e *bodyError) Error() string { return e.message + " (at " + e.location + ")" }

// typeMessage says what a field of type t expects, in JSON terms.
func typeMessage(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return msgOtherType
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return msgInteger
	case reflect.Float32, reflect.Float64:
		return msgNumber
	}
	return msgOtherType
}

// invalidUTF8 returns the offset of the first byte of data that is not
// valid UTF-8.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(data)
}

// scanner walks a JSON document's bytes (without parsing it: on malformed
// JSON it may stop early, and decoding then reports the syntax error),
// keeping the containers it is in, so that it can name any place in the
// body (body.photos[3].bibs[0]).
type scanner struct {
	data  []byte
	i     int
	stack []container
	// noKeys skips the duplicate-key bookkeeping (for pathAt).
	noKeys bool
}

// container is an object or array the scanner is in. It keeps only its
// current key or index; paths are built from the stack when needed.
type container struct {
	object  bool
	wantKey bool // in an object: the next string is a key
	keys    map[string]struct{}
	key     string // in an object: the current key
	index   int    // in an array: the current index
}

// path is the location of the current value of the innermost container
// (the container itself when member is false).
func (s *scanner) path(member bool) string {
	var b []byte
	b = append(b, "body"...)
	n := len(s.stack)
	if !member {
		n--
	}
	for _, c := range s.stack[:max(n, 0)] {
		if c.object {
			b = append(b, '.')
			b = append(b, c.key...)
		} else {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(c.index), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

// step reads one token (a string, a bracket, a comma, or any other byte)
// and returns a refusal, if any; done is true at the end of the data or
// where the scan cannot go on.
func (s *scanner) step() (err *bodyError, done bool) {
	if s.i >= len(s.data) {
		return nil, true
	}
	switch c := s.data[s.i]; c {
	case '"':
		start := s.i
		end, surrogate := stringEnd(s.data, start)
		if end < 0 {
			return nil, true
		}
		s.i = end
		n := len(s.stack)
		isKey := n > 0 && s.stack[n-1].object && s.stack[n-1].wantKey
		if surrogate {
			if isKey {
				return &bodyError{location: s.path(false), message: msgSurrogate}, true
			}
			return &bodyError{location: s.path(true), message: msgSurrogate}, true
		}
		if isKey {
			top := &s.stack[n-1]
			key := unquote(s.data[start:end])
			if s.noKeys {
				top.key, top.wantKey = key, false
				break
			}
			if _, dup := top.keys[key]; dup {
				top.key = key
				return &bodyError{location: s.path(true), message: msgDuplicate}, true
			}
			if top.keys == nil {
				top.keys = map[string]struct{}{}
			}
			top.keys[key], top.key, top.wantKey = struct{}{}, key, false
		}
	case '{', '[':
		if len(s.stack) >= MaxBodyDepth {
			return &bodyError{location: s.path(true), message: msgTooDeep}, true
		}
		// Reuse the key set a closed container at this depth left behind:
		// a body of many small objects then allocates one set per level.
		var keys map[string]struct{}
		if n := len(s.stack); n < cap(s.stack) {
			keys = s.stack[:n+1][n].keys
			clear(keys)
		}
		s.stack = append(s.stack, container{object: c == '{', wantKey: c == '{', keys: keys})
		s.i++
	case '}', ']':
		if len(s.stack) == 0 {
			return nil, true
		}
		s.stack = s.stack[:len(s.stack)-1]
		s.i++
	case ',':
		if n := len(s.stack); n > 0 {
			if s.stack[n-1].object {
				s.stack[n-1].wantKey = true
			} else {
				s.stack[n-1].index++
			}
		}
		s.i++
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// A number (outside strings, only numbers start so). One beyond
		// float64 would fail decoding into an any with no usable offset:
		// name its place here.
		start := s.i
		for s.i++; s.i < len(s.data) && strings.IndexByte("0123456789+-.eE", s.data[s.i]) >= 0; s.i++ {
		}
		if !s.noKeys {
			if _, err := strconv.ParseFloat(string(s.data[start:s.i]), 64); errors.Is(err, strconv.ErrRange) {
				return &bodyError{location: s.path(true), message: msgNumber}, true
			}
		}
	default:
		s.i++
	}
	return nil, false
}

// checkBody returns strictJSON's refusal of data, if any: a repeated key,
// an unpaired surrogate escape, nesting beyond MaxBodyDepth, or a number
// beyond float64.
func checkBody(data []byte) error {
	s := scanner{data: data}
	for {
		if err, done := s.step(); done {
			if err != nil {
				return err
			}
			return nil
		}
	}
}

// pathAt returns the location of the value that ends at offset in data
// (where encoding/json reports a type error).
func pathAt(data []byte, offset int) string {
	offset = min(max(offset, 0), len(data))
	if offset > 0 && (data[offset-1] == '{' || data[offset-1] == '[') {
		offset-- // the value is the object or array that starts there
	}
	s := scanner{data: data[:offset], noKeys: true}
	for {
		if _, done := s.step(); done {
			break
		}
	}
	if len(s.stack) == 0 {
		return "body"
	}
	return s.path(true)
}

// stringEnd returns the index just past the JSON string starting at
// data[i] (a '"'), or -1 if it does not end, and whether it holds a \u
// escape of an unpaired UTF-16 surrogate.
func stringEnd(data []byte, i int) (end int, surrogate bool) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			if j+1 < len(data) && data[j+1] == 'u' {
				r, ok := hex4(data, j+2)
				switch {
				case !ok:
				case r >= 0xD800 && r <= 0xDBFF:
					if low, ok := escapedRune(data, j+6); ok && low >= 0xDC00 && low <= 0xDFFF {
						j += 6 // the pair's second half
					} else {
						surrogate = true
					}
				case r >= 0xDC00 && r <= 0xDFFF:
					surrogate = true
				}
			}
			j++
		case '"':
			return j + 1, surrogate
		}
	}
	return -1, surrogate
}

// escapedRune reads a \uXXXX escape at data[i].
func escapedRune(data []byte, i int) (rune, bool) {
	if i+1 >= len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return 0, false
	}
	return hex4(data, i+2)
}

// hex4 reads four hex digits at data[i].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[i:i+4]), 16, 32)
	return rune(v), err == nil
}

// unquote returns the value of the JSON string raw (quotes included).
func unquote(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}
