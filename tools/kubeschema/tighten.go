package kubeschema

import (
	"maps"
	"slices"
	"strings"
)

// tighten rewrites an OpenAPI schema (Kubernetes's or a CRD's) in place
// into the JSON Schema (draft 4) kubeconform compiles, closed to unknown
// fields:
//   - an object with properties and no additionalProperties gets
//     additionalProperties: false, unless x-kubernetes-preserve-unknown-fields
//     keeps it open;
//   - int-or-string (x-kubernetes-int-or-string, or format int-or-string)
//     becomes a string or an integer;
//   - nullable: true lets the value be null;
//   - descriptions and the x-kubernetes-* extensions go (they do not
//     validate, and the schemas get much smaller).
func tighten(s map[string]any) {
	open := s["x-kubernetes-preserve-unknown-fields"] == true
	if s["x-kubernetes-int-or-string"] == true || s["format"] == "int-or-string" {
		delete(s, "format")
		s["type"] = []any{"string", "integer"}
	}
	if s["nullable"] == true {
		allowNull(s)
	}
	delete(s, "nullable")
	for _, k := range slices.Collect(maps.Keys(s)) {
		if k == "description" || strings.HasPrefix(k, "x-") {
			delete(s, k)
		}
	}
	props, _ := s["properties"].(map[string]any)
	if _, set := s["additionalProperties"]; props != nil && !set && !open {
		s["additionalProperties"] = false
	}
	for _, p := range props {
		if p, ok := p.(map[string]any); ok {
			tighten(p)
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			tighten(sub)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		for _, sub := range asList(s[k]) {
			if sub, ok := sub.(map[string]any); ok {
				tighten(sub)
			}
		}
	}
}

// allowNull lets a typed schema's value be null as well.
func allowNull(s map[string]any) {
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
	case []any:
		s["type"] = append(t, "null")
	}
}

// nullOptional lets each optional property of every object in s (recursively)
// be null, as the API server takes it (absent): Kubernetes's OpenAPI v2
// document does not say which fields are nullable (openapi2jsonschema does
// the same).
func nullOptional(s map[string]any) {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asList(s["required"]) {
		if r, ok := r.(string); ok {
			required[r] = true
		}
	}
	for name, p := range props {
		p, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if !required[name] {
			allowNull(p)
		}
		nullOptional(p)
	}
	if items, ok := s["items"].(map[string]any); ok {
		nullOptional(items)
	}
}

// standalone returns the schema of one kind: root, with apiVersion and
// kind fixed to the kind's, and each definition it refers to
// ("#/definitions/NAME") written in place of the reference, so that a
// finding names the field at fault (kubeconform reports a failed
// reference as a whole). A definition that refers to itself
// (JSONSchemaProps) stays a reference, into the schema's definitions.
func standalone(root map[string]any, defs map[string]any, apiVersion, kind string) map[string]any {
	root = maps.Clone(root)
	props := maps.Clone(asMap(root["properties"]))
	props["apiVersion"] = map[string]any{"type": "string", "enum": []any{apiVersion}}
	props["kind"] = map[string]any{"type": "string", "enum": []any{kind}}
	root["properties"] = props
	kept := map[string]bool{}
	out := asMap(inline(root, defs, map[string]bool{}, kept))
	used := map[string]any{}
	for len(used) < len(kept) {
		for name := range kept {
			if used[name] == nil {
				used[name] = inline(defs[name], defs, map[string]bool{name: true}, kept)
			}
		}
	}
	if len(used) > 0 {
		out["definitions"] = used
	}
	return out
}

// inline returns a copy of s with each reference replaced by its
// definition, except where that definition is being inlined already
// (on stack): that reference stays, and its name goes into kept.
func inline(s any, defs map[string]any, stack, kept map[string]bool) any {
	switch s := s.(type) {
	case map[string]any:
		if r, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(r, "#/definitions/")
			if stack[name] {
				kept[name] = true
				return s
			}
			stack[name] = true
			defer delete(stack, name)
			return inline(defs[name], defs, stack, kept)
		}
		out := make(map[string]any, len(s))
		for k, v := range s {
			out[k] = inline(v, defs, stack, kept)
		}
		return out
	case []any:
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = inline(v, defs, stack, kept)
		}
		return out
	}
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func lower(s string) string { return strings.ToLower(s) }
