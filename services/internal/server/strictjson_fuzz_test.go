package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzDuplicateKey checks strictJSON's duplicate-key refusal (json/v2's
// check, located by pathOf) against a second implementation built on
// encoding/json's Decoder tokens: on every valid JSON document (in UTF-8)
// both name the same first duplicate key, or none.
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `[{"a":1},{"a":1,"a":2}]`, `{"a":"x\",\"a\":1","b":[1,{"c":2,"c":3}]}`,
		`{"capacity":-1,"\u0063apacity":5}`, `{"":1,"":2}`, `"str"`, `[1,2,[3,[4]]]`, `{"a":[],"b":{},"a":null}`,
		`{"k\\":1,"k\\":2}`, `{"é":1,"\u00e9":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) { // strictJSON checks UTF-8 first
			return
		}
		var v any
		var be *bodyError
		if errors.As(strictJSON.Unmarshal(data, &v), &be) && be.message != msgDuplicate {
			return // refused for depth, a surrogate or a number before any duplicate
		}
		got, gotDup := duplicateKey(data)
		want, wantDup := referenceDuplicateKey(data)
		if got != want || gotDup != wantDup {
			t.Fatalf("duplicateKey(%q) = %q %v, the token walk says %q %v", data, got, gotDup, want, wantDup)
		}
	})
}

// duplicateKey reports the location of the first repeated key in data,
// as strictJSON refuses it.
func duplicateKey(data []byte) (string, bool) {
	var v any
	var be *bodyError
	if errors.As(strictJSON.Unmarshal(data, &v), &be) && be.message == msgDuplicate {
		return be.location, true
	}
	return "", false
}

// referenceDuplicateKey is duplicateKey written over json.Decoder tokens.
func referenceDuplicateKey(data []byte) (string, bool) {
	type frame struct {
		object  bool
		keys    map[string]bool
		path    string
		key     string
		wantKey bool
		index   int
	}
	var stack []*frame
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
	done := func() {
		if len(stack) == 0 {
			return
		}
		if f := stack[len(stack)-1]; f.object {
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
			if t == '{' || t == '[' {
				stack = append(stack, &frame{object: t == '{', wantKey: t == '{', keys: map[string]bool{}, path: child()})
				continue
			}
			stack = stack[:len(stack)-1]
		case string:
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				f := stack[n-1]
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

// FuzzStrictJSON feeds any bytes to strictJSON's first decode: it never
// panics, and what it accepts is valid UTF-8 JSON without a repeated key
// that decodes exactly as encoding/json decodes it.
func FuzzStrictJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `[[[[]]]]`, `"x`, `}}]]`, `{"a":"\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got any
		if strictJSON.Unmarshal(data, &got) != nil {
			return
		}
		var want any
		if err := json.Unmarshal(data, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("strictJSON accepted %q as %#v; encoding/json: %#v, %v", data, got, want, err)
		}
		if !utf8.Valid(data) {
			t.Fatalf("strictJSON accepted invalid UTF-8 %q", data)
		}
		if path, dup := referenceDuplicateKey(data); dup {
			t.Fatalf("strictJSON accepted %q, which repeats %s", data, path)
		}
	})
}

func TestTooDeepMessageNamesTheLimit(t *testing.T) {
	if !strings.Contains(msgTooDeep, strconv.Itoa(MaxBodyDepth)) {
		t.Fatalf("%q does not name MaxBodyDepth %d", msgTooDeep, MaxBodyDepth)
	}
}

// pathOf turns a JSON Pointer into a body path, telling an array's index
// from an object's key made of digits.
func TestPathOf(t *testing.T) {
	data := `{"photos":[{"size":1},{"size":{"q":1},"bibs":[[1],2]}],"n":{"1":[3,{"0":4}]},"a/b~":{"":5}}`
	for _, c := range []struct {
		pointer jsontext.Pointer
		want    string
	}{
		{"", "body"},
		{"/photos/0/size", "body.photos[0].size"},
		{"/photos/1/size/q", "body.photos[1].size.q"},
		{"/photos/1/bibs/0/0", "body.photos[1].bibs[0][0]"},
		{"/photos/1/bibs/1", "body.photos[1].bibs[1]"},
		{"/n/1/1/0", "body.n.1[1].0"},
		{"/a~1b~0/", "body.a/b~."},
	} {
		if got := pathOf([]byte(data), c.pointer); got != c.want {
			t.Errorf("pathOf(%s) = %s, want %s", c.pointer, got, c.want)
		}
	}
}
