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

// duplicateKey reports the location (body.a.b[2].c) of the first key that
// repeats within one object of data. Malformed JSON reports nothing:
// decoding it reports the syntax error.
func duplicateKey(data []byte) (string, bool) {
	type frame struct {
		object  bool
		keys    map[string]bool
		path    string
		key     string // the current key, in an object
		wantKey bool   // the next string is a key
		index   int    // the current index, in an array
	}
	var stack []*frame
	// child is the location of the value that starts now.
	child := func() string {
		if len(stack) == 0 {
			return "body"
		}
		f := stack[len(stack)-1]
		if f.object {
			return f.path + "." + f.key
		}
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	// done moves the innermost container past the value that just ended.
	done := func() {
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.object {
			f.wantKey = true
		} else {
			f.index++
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, &frame{object: t == '{', wantKey: t == '{', path: child()})
				continue
			default: // '}' or ']'
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return "", false
				}
			}
		case string:
			if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
				f := stack[len(stack)-1]
				if f.keys == nil {
					f.keys = map[string]bool{}
				}
				if f.keys[t] {
					return f.path + "." + t, true
				}
				f.keys[t], f.key, f.wantKey = true, t, false
				continue
			}
		}
		done()
	}
}
