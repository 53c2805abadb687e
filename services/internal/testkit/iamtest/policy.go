package iamtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Policy is a parsed IAM identity-based policy: Allow and Deny statements
// of actions on resources. The zero Policy allows nothing.
type Policy struct {
	statements []statement
}

// statement is one statement of a Policy.
type statement struct {
	sid       string
	deny      bool
	actions   []string
	resources []string
}

// ErrPolicy is wrapped by every error of ParsePolicy and ResolvePolicy.
var ErrPolicy = errors.New("iamtest: policy")

// ParsePolicy parses an IAM policy document in its decoded JSON form (the
// map[string]any that json.Unmarshal gives, or anything that marshals to
// it, such as a template's map with []string lists; raw JSON as []byte or
// json.RawMessage too). Statement is one object or a list; each has an
// Effect of Allow or Deny and an Action and a Resource, each a string or a
// list. What it does not evaluate is an error, never ignored: NotAction,
// NotResource, Condition, Principal, NotPrincipal, any other key, and
// policy variables (${...}) in a Resource. CloudFormation intrinsics are
// resolved by ResolvePolicy, not here.
func ParsePolicy(doc any) (Policy, error) {
	d, err := decoded(doc)
	if err != nil {
		return Policy{}, err
	}
	m, ok := d.(map[string]any)
	if !ok {
		return Policy{}, fmt.Errorf("%w: document is a %T, not an object", ErrPolicy, d)
	}
	if _, ok := m["Statement"]; !ok {
		return Policy{}, fmt.Errorf("%w: the document has no Statement", ErrPolicy)
	}
	var p Policy
	for k, v := range m {
		switch k {
		case "Version", "Id":
		case "Statement":
			list, ok := v.([]any)
			if !ok {
				list = []any{v}
			}
			for i, s := range list {
				st, err := parseStatement(s)
				if err != nil {
					return Policy{}, fmt.Errorf("%w: statement %d: %v", ErrPolicy, i, err)
				}
				p.statements = append(p.statements, st)
			}
		default:
			return Policy{}, fmt.Errorf("%w: unknown key %q in the document", ErrPolicy, k)
		}
	}
	return p, nil
}

// decoded returns doc in the form json.Unmarshal gives: raw JSON is
// decoded, anything else marshalled and decoded again.
func decoded(doc any) (any, error) {
	var raw []byte
	switch d := doc.(type) {
	case []byte:
		raw = d
	case json.RawMessage:
		raw = d
	default:
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
		}
		raw = b
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPolicy, err)
	}
	return out, nil
}

// parseStatement parses one statement object.
func parseStatement(s any) (statement, error) {
	m, ok := s.(map[string]any)
	if !ok {
		return statement{}, fmt.Errorf("a statement is a %T, not an object", s)
	}
	var st statement
	var err error
	for k, v := range m {
		switch k {
		case "Sid":
			st.sid, _ = v.(string)
		case "Effect":
			switch v {
			case "Allow":
			case "Deny":
				st.deny = true
			default:
				return statement{}, fmt.Errorf("Effect %v is neither Allow nor Deny", v)
			}
		case "Action":
			st.actions, err = strings1(k, v)
		case "Resource":
			st.resources, err = strings1(k, v)
		case "NotAction", "NotResource", "Condition", "Principal", "NotPrincipal":
			return statement{}, fmt.Errorf("%s is not supported by iamtest", k)
		default:
			return statement{}, fmt.Errorf("unknown statement key %q", k)
		}
		if err != nil {
			return statement{}, err
		}
	}
	if m["Effect"] == nil || st.actions == nil || st.resources == nil {
		return statement{}, fmt.Errorf("a statement needs Effect, Action and Resource (sid %q)", st.sid)
	}
	for _, r := range st.resources {
		if strings.Contains(r, "${") {
			return statement{}, fmt.Errorf("Resource %q holds a policy variable or an unresolved Fn::Sub (use ResolvePolicy)", r)
		}
	}
	return st, nil
}

// strings1 reads a string or a non-empty list of strings.
func strings1(key string, v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s holds a %T (%v), not a string; CloudFormation intrinsics need ResolvePolicy", key, e, e)
			}
			out = append(out, s)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s is an empty list", key)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s is a %T (%v), not a string or a list; CloudFormation intrinsics need ResolvePolicy", key, v, v)
}

// Allows reports whether the policy allows action on resource, as IAM
// evaluates an identity-based policy: an explicit Deny wins, otherwise an
// Allow must match, and nothing matching is a deny. Actions match
// case-insensitively, resources case-sensitively, both with the wildcards
// * (any run of characters, / included) and ? (one character).
func (p Policy) Allows(action, resource string) bool {
	allowed, _ := p.decide(action, resource)
	return allowed
}

// decide is Allows, also saying whether a Deny statement matched.
func (p Policy) decide(action, resource string) (allowed, denied bool) {
	for _, st := range p.statements {
		if !st.matches(action, resource) {
			continue
		}
		if st.deny {
			return false, true
		}
		allowed = true
	}
	return allowed, false
}

func (st statement) matches(action, resource string) bool {
	return slices.ContainsFunc(st.actions, func(a string) bool { return match(strings.ToLower(a), strings.ToLower(action)) }) &&
		slices.ContainsFunc(st.resources, func(r string) bool { return match(r, resource) })
}

// Without returns a copy of p with action removed from every statement
// (compared case-insensitively, as written: a wildcard such as dynamodb:*
// that covers it stays). A statement left with no action matches nothing.
// The access test uses it to show that each action of a policy is needed.
func (p Policy) Without(action string) Policy {
	out := Policy{statements: make([]statement, len(p.statements))}
	for i, st := range p.statements {
		st.actions = slices.DeleteFunc(slices.Clone(st.actions), func(a string) bool { return strings.EqualFold(a, action) })
		out.statements[i] = st
	}
	return out
}

// Actions returns the actions the policy's statements name, as written,
// sorted and without repeats (the candidates for Without).
func (p Policy) Actions() []string {
	seen := map[string]bool{}
	var out []string
	for _, st := range p.statements {
		for _, a := range st.actions {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}

// String renders the policy one statement a line, for test failures.
func (p Policy) String() string {
	var b strings.Builder
	for _, st := range p.statements {
		effect := "Allow"
		if st.deny {
			effect = "Deny"
		}
		fmt.Fprintf(&b, "%s %s on %s\n", effect, strings.Join(st.actions, ","), strings.Join(st.resources, ","))
	}
	return b.String()
}

// match reports whether s matches the IAM wildcard pattern: * matches any
// run of characters (/ and : included), ? any one character (ARNs and
// actions are ASCII), everything else itself, case-sensitively.
func match(pattern, s string) bool {
	// Iterative glob: on a mismatch, let the last * take one more byte.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			mark++
			p, i = star+1, mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
