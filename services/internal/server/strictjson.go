package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// strictJSON is the JSON format of Pacer's APIs: encoding/json, except
// that a request body must be valid UTF-8 and must not repeat a key in an
// object. encoding/json would replace invalid bytes with U+FFFD and keep
// the last of repeated keys, so {"capacity":-1,"capacity":5} would pass
// validation of one value and store the other, and a title of bytes
// FF FE would be stored as "��".
var strictJSON = huma.Format{
	Marshal: huma.DefaultJSONFormat.Marshal,
	Unmarshal: func(data []byte, v any) error {
		// Huma decodes a body twice: into an any to validate it, then into
		// the input struct. Checking the first is enough.
		if _, first := v.(*any); first {
			if !utf8.Valid(data) {
				return &bodyError{location: "body", message: fmt.Sprintf("the body is not valid UTF-8 (first invalid byte at offset %d)", invalidUTF8(data))}
			}
			if path, dup := duplicateKey(data); dup {
				return &bodyError{location: path, message: "duplicate key: each key may appear once in an object"}
			}
		}
		return json.Unmarshal(data, v)
	},
}

// bodyError is a strictJSON refusal. Huma reports it at location "body"
// with its text; describeBodyError moves it to its own location.
type bodyError struct{ location, message string }

func (e *bodyError) Error() string { return e.message + " (at " + e.location + ")" }

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

// maxKeyDepth bounds how deep duplicateKey follows nesting; encoding/json
// refuses deeper documents (10000 levels) anyway.
const maxKeyDepth = 10000

// duplicateKey reports the location (body.a.b[2].c) of the first key that
// repeats within one object of data, comparing keys after unescaping
// ("\u0063apacity" is "capacity"). It is a single pass over the bytes, not
// a parse: on malformed JSON it may report nothing, and decoding it then
// reports the syntax error.
func duplicateKey(data []byte) (string, bool) {
	type frame struct {
		object  bool
		wantKey bool // in an object: the next string is a key
		keys    map[string]struct{}
		path    string
		key     string // in an object: the current key
		index   int    // in an array: the current index
	}
	var stack []frame
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case '"':
			end := stringEnd(data, i)
			if end < 0 {
				return "", false
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				f := &stack[n-1]
				key := unquote(data[i:end])
				if _, dup := f.keys[key]; dup {
					return f.path + "." + key, true
				}
				if f.keys == nil {
					f.keys = map[string]struct{}{}
				}
				f.keys[key], f.key, f.wantKey = struct{}{}, key, false
			}
			i = end
		case '{', '[':
			if len(stack) >= maxKeyDepth {
				return "", false
			}
			path := "body"
			if n := len(stack); n > 0 {
				if f := &stack[n-1]; f.object {
					path = f.path + "." + f.key
				} else {
					path = f.path + "[" + strconv.Itoa(f.index) + "]"
				}
			}
			stack = append(stack, frame{object: c == '{', wantKey: c == '{', path: path})
			i++
		case '}', ']':
			if len(stack) == 0 {
				return "", false
			}
			stack = stack[:len(stack)-1]
			i++
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].wantKey = true
				} else {
					stack[n-1].index++
				}
			}
			i++
		default:
			i++
		}
	}
	return "", false
}

// stringEnd returns the index just past the JSON string starting at
// data[i] (a '"'), or -1 if it does not end.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
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
