package iamtest

import (
	"fmt"
	"sort"
	"strings"
)

// ResolvePolicy resolves the CloudFormation intrinsics in a policy
// document, as CloudFormation would when it creates the role, and parses
// the result (ParsePolicy). refs gives the values:
//
//   - {"Fn::GetAtt": ["Table", "Arn"]} (or "Table.Arn") is refs["Table.Arn"];
//   - {"Ref": "X"} is refs["X"], a pseudo parameter too: refs["AWS::Region"];
//   - {"Fn::Sub": "${Table.Arn}/index/*"} replaces ${Table.Arn} by
//     refs["Table.Arn"], ${X} by refs["X"] (${AWS::Region} included) and
//     ${!X} by the literal ${X}; its list form [string, {name: value}]
//     takes a name from the map first;
//   - {"Fn::Join": [delimiter, [parts]]} joins the resolved parts.
//
// A reference refs does not hold, and any other intrinsic, is an error
// naming it, never an empty string.
func ResolvePolicy(doc any, refs map[string]string) (Policy, error) {
	d, err := decoded(doc)
	if err != nil {
		return Policy{}, err
	}
	r, err := resolve(d, refs)
	if err != nil {
		return Policy{}, err
	}
	return ParsePolicy(r)
}

// resolve returns v with its intrinsics replaced by their values.
func resolve(v any, refs map[string]string) (any, error) {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			r, err := resolve(e, refs)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		if len(v) == 1 {
			for k, arg := range v {
				if k == "Ref" || strings.HasPrefix(k, "Fn::") {
					return intrinsic(k, arg, refs)
				}
			}
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			r, err := resolve(e, refs)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

// intrinsic resolves one intrinsic function to its string value.
func intrinsic(name string, arg any, refs map[string]string) (string, error) {
	switch name {
	case "Ref":
		s, ok := arg.(string)
		if !ok {
			return "", fmt.Errorf("%w: Ref of a %T", ErrPolicy, arg)
		}
		return lookup(refs, s)
	case "Fn::GetAtt":
		return getAtt(arg, refs)
	case "Fn::Sub":
		return sub(arg, refs)
	case "Fn::Join":
		return join(arg, refs)
	}
	return "", fmt.Errorf("%w: intrinsic %s is not supported by iamtest", ErrPolicy, name)
}

// lookup is refs[key], or an error naming key and what refs holds.
func lookup(refs map[string]string, key string) (string, error) {
	if v, ok := refs[key]; ok {
		return v, nil
	}
	known := make([]string, 0, len(refs))
	for k := range refs {
		known = append(known, k)
	}
	sort.Strings(known)
	return "", fmt.Errorf("%w: unknown reference %q (refs holds %s)", ErrPolicy, key, strings.Join(known, ", "))
}

// getAtt resolves Fn::GetAtt's argument: [id, attr] or "id.attr".
func getAtt(arg any, refs map[string]string) (string, error) {
	switch a := arg.(type) {
	case string:
		return lookup(refs, a)
	case []any:
		if len(a) == 2 {
			id, ok1 := a[0].(string)
			attr, ok2 := a[1].(string)
			if ok1 && ok2 {
				return lookup(refs, id+"."+attr)
			}
		}
	}
	return "", fmt.Errorf("%w: Fn::GetAtt of %v: want [id, attribute]", ErrPolicy, arg)
}

// sub resolves Fn::Sub's argument: a template string, or [template,
// {name: value}].
func sub(arg any, refs map[string]string) (string, error) {
	var tmpl string
	vars := map[string]string{}
	switch a := arg.(type) {
	case string:
		tmpl = a
	case []any:
		m, ok := map[string]any(nil), false
		if len(a) == 2 {
			tmpl, ok = a[0].(string)
			m, _ = a[1].(map[string]any)
		}
		if !ok || m == nil {
			return "", fmt.Errorf("%w: Fn::Sub of %v: want a string or [string, map]", ErrPolicy, arg)
		}
		for k, v := range m {
			r, err := resolve(v, refs)
			if err != nil {
				return "", err
			}
			s, ok := r.(string)
			if !ok {
				return "", fmt.Errorf("%w: Fn::Sub variable %s is a %T, not a string", ErrPolicy, k, r)
			}
			vars[k] = s
		}
	default:
		return "", fmt.Errorf("%w: Fn::Sub of a %T", ErrPolicy, arg)
	}
	return substitute(tmpl, vars, refs)
}

// substitute replaces each ${name} of tmpl by vars[name] or refs[name],
// and ${!name} by the literal ${name}.
func substitute(tmpl string, vars, refs map[string]string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(tmpl, "${")
		if i < 0 {
			b.WriteString(tmpl)
			return b.String(), nil
		}
		j := strings.Index(tmpl[i:], "}")
		if j < 0 {
			return "", fmt.Errorf("%w: Fn::Sub %q: unclosed ${", ErrPolicy, tmpl)
		}
		b.WriteString(tmpl[:i])
		name := tmpl[i+2 : i+j]
		switch v, ok := vars[name]; {
		case strings.HasPrefix(name, "!"):
			b.WriteString("${" + name[1:] + "}")
		case ok:
			b.WriteString(v)
		default:
			v, err := lookup(refs, name)
			if err != nil {
				return "", err
			}
			b.WriteString(v)
		}
		tmpl = tmpl[i+j+1:]
	}
}

// join resolves Fn::Join's argument: [delimiter, [parts]].
func join(arg any, refs map[string]string) (string, error) {
	a, ok := arg.([]any)
	if !ok || len(a) != 2 {
		return "", fmt.Errorf("%w: Fn::Join of %v: want [delimiter, [parts]]", ErrPolicy, arg)
	}
	delim, ok1 := a[0].(string)
	parts, ok2 := a[1].([]any)
	if !ok1 || !ok2 {
		return "", fmt.Errorf("%w: Fn::Join of %v: want [delimiter, [parts]]", ErrPolicy, arg)
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		r, err := resolve(p, refs)
		if err != nil {
			return "", err
		}
		s, ok := r.(string)
		if !ok {
			return "", fmt.Errorf("%w: Fn::Join part %v is a %T, not a string", ErrPolicy, p, r)
		}
		out[i] = s
	}
	return strings.Join(out, delim), nil
}
