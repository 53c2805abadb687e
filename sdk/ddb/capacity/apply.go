package capacity

import (
	"maps"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Apply predicts the item an UpdateItem makes of before (nil: a new item
// with key), from its update expression, for pricing a write before it is
// made. It follows top-level attributes: SET a = :v, SET a =
// if_not_exists(a, :v), SET a = a ± :v (the number keeps the larger
// size of the two), REMOVE a, ADD a :v; a nested path or another function
// keeps the attribute as it was.
func Apply(before, key Item, update string, names map[string]string, values map[string]types.AttributeValue) Item {
	after := maps.Clone(before)
	if after == nil {
		after = maps.Clone(key)
	}
	name := func(tok string) string {
		tok = strings.TrimSpace(tok)
		if n, ok := names[tok]; ok {
			return n
		}
		return tok
	}
	value := func(tok string) types.AttributeValue { return values[strings.TrimSpace(tok)] }
	for _, cl := range clauses(update) {
		switch cl.verb {
		case "SET":
			for _, a := range splitTop(cl.body) {
				lhs, rhs, ok := strings.Cut(a, "=")
				if !ok {
					continue
				}
				n, rhs := name(lhs), strings.TrimSpace(rhs)
				switch {
				case strings.HasPrefix(rhs, ":"):
					after[n] = value(rhs)
				case strings.HasPrefix(rhs, "if_not_exists("):
					if _, ok := after[n]; !ok {
						args := splitTop(strings.TrimSuffix(strings.TrimPrefix(rhs, "if_not_exists("), ")"))
						if len(args) == 2 {
							after[n] = value(args[1])
						}
					}
				default:
					for _, op := range []string{"+", "-"} {
						if l, r, ok := strings.Cut(rhs, op); ok {
							if v := value(r); v != nil {
								after[n] = larger(after[n], v)
							} else if v := value(l); v != nil {
								after[n] = larger(after[n], v)
							}
							break
						}
					}
				}
			}
		case "REMOVE":
			for _, a := range splitTop(cl.body) {
				delete(after, name(a))
			}
		case "ADD":
			for _, a := range splitTop(cl.body) {
				f := strings.Fields(a)
				if len(f) == 2 {
					after[name(f[0])] = larger(after[name(f[0])], value(f[1]))
				}
			}
		}
	}
	return after
}

func larger(a, b types.AttributeValue) types.AttributeValue {
	if a == nil || (b != nil && ValueSize(b) > ValueSize(a)) {
		return b
	}
	return a
}

type clause struct{ verb, body string }

// clauses splits an update expression at its SET, REMOVE, ADD and DELETE
// keywords.
func clauses(expr string) []clause {
	var out []clause
	f := strings.Fields(expr)
	for _, w := range f {
		switch up := strings.ToUpper(w); up {
		case "SET", "REMOVE", "ADD", "DELETE":
			out = append(out, clause{verb: up})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].body += " " + w
		}
	}
	return out
}

// splitTop splits at commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}
