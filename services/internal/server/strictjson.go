package server

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// strictJSON is the JSON format of Pacer's APIs: request bodies are read
// by github.com/go-json-experiment/json (Go's json/v2), which refuses
// invalid UTF-8, unpaired \uD800-\uDFFF escapes, repeated keys (also when
// spelled with escapes: \u0063apacity is capacity), numbers beyond float64,
// and integers written with a fraction or exponent (5e0 or 1.0), and
// matches keys to fields case-sensitively; strictJSON adds a nesting bound
// of MaxBodyDepth and names each refusal by its place in the body
// (body.photos[1].size). encoding/json would replace invalid bytes and
// unpaired surrogates with U+FFFD and keep the last of repeated keys, so
// {"capacity":-1,"capacity":5} would pass validation of one value and
// store the other. (Huma's schema validation is made case-sensitive too:
// see huma.ValidateStrictCasing, set by NewAPI.) Responses are
// still written by Huma's encoding/json format.
var strictJSON = huma.Format{
	Marshal: huma.DefaultJSONFormat.Marshal,
	Unmarshal: func(data []byte, v any) error {
		// Huma decodes a body twice: into an any to validate it, then into
		// the input struct. The depth bound runs on the first; json
		// refuses the rest on either.
		if _, first := v.(*any); first {
			if err := checkDepth(data); err != nil {
				return err
			}
		}
		return refusal(data, json.Unmarshal(data, v))
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

// checkDepth refuses data if it nests deeper than MaxBodyDepth, naming
// the first object or array too deep. It reads tokens only until the first
// value ends or the first error, which json.Unmarshal then reports.
func checkDepth(data []byte) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	for tok, err := dec.ReadToken(); err == nil && dec.StackDepth() > 0; tok, err = dec.ReadToken() {
		if k := tok.Kind(); (k == '{' || k == '[') && dec.StackDepth() > MaxBodyDepth {
			return &bodyError{location: pathOf(data, dec.StackPointer()), message: msgTooDeep}
		}
	}
	return nil
}

// refusal returns err, a json.Unmarshal error on data, as a bodyError
// naming its place, or err itself if it is none of strictJSON's refusals
// (a syntax error).
func refusal(data []byte, err error) error {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case err == nil:
		return nil
	case !utf8.Valid(data):
		return &bodyError{location: "body", message: fmt.Sprintf("%s (first invalid byte at offset %d)", msgNotUTF8, invalidUTF8(data))}
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return &bodyError{location: pathOf(data, syn.JSONPointer), message: msgDuplicate}
	case errors.As(err, &syn) && strings.HasPrefix(syn.Err.Error(), "invalid surrogate pair"):
		// json's error for \uD800-\uDFFF has no sentinel; its text is
		// pinned by TestStrictJSONBodies.
		return &bodyError{location: pathOf(data, syn.JSONPointer), message: msgSurrogate}
	case errors.As(err, &sem) && sem.GoType != nil &&
		(sem.Err == nil || errors.Is(sem.Err, strconv.ErrSyntax) || errors.Is(sem.Err, strconv.ErrRange)):
		// A value that does not fit its Go type: 5e0 or 300 for an int8,
		// or 1e400 for any number.
		return &bodyError{location: pathOf(data, sem.JSONPointer), message: typeMessage(sem.GoType)}
	}
	return err
}

// pathOf returns the place in data that the JSON Pointer p names, as a
// body path: /photos/1/size is body.photos[1].size where photos holds an
// array, and body.photos.1.size where it holds an object.
func pathOf(data []byte, p jsontext.Pointer) string {
	b := []byte("body")
	dec := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	for name := range p.Tokens() {
		if dec.PeekKind() != '[' {
			b = append(append(b, '.'), name...)
			if _, err := dec.ReadToken(); err != nil {
				continue
			}
			for {
				key, err := dec.ReadToken()
				if err != nil || key.Kind() != '"' || key.String() == name {
					break
				}
				if dec.SkipValue() != nil {
					break
				}
			}
			continue
		}
		b = append(append(append(b, '['), name...), ']')
		n, _ := strconv.Atoi(name)
		if _, err := dec.ReadToken(); err != nil {
			continue
		}
		for range n {
			if dec.SkipValue() != nil {
				break
			}
		}
	}
	return string(b)
}
