package server

import (
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// MaxEchoedValue bounds how much of an offending value a problem+json
// response echoes back in errors[].value: Huma echoes the whole value, so a
// 1 MB field would come back whole.
const MaxEchoedValue = 64

func init() {
	newError := huma.NewError
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		se := newError(status, msg, errs...)
		if m, ok := se.(*huma.ErrorModel); ok {
			for _, d := range m.Errors {
				if d != nil {
					d.Value = clip(d.Value)
				}
			}
		}
		return se
	}
}

// clip shortens a long string to MaxEchoedValue bytes (on a rune boundary)
// and replaces a long list or object by its size.
func clip(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if len(x) <= MaxEchoedValue {
			return x
		}
		cut := MaxEchoedValue
		for cut > 0 && !utf8.RuneStart(x[cut]) {
			cut--
		}
		return x[:cut] + fmt.Sprintf("… (%d bytes)", len(x))
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		if rv.Len() > 8 {
			return fmt.Sprintf("(%d items)", rv.Len())
		}
	}
	return v
}
