package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// The CloudFormation resource specification (AWS's, as published in the
// npm package @aws-cdk/cfnspec, spec/specification.json) for the resource
// types the template uses, and the property types they reference, is
// committed in testdata/cfnspec.json. Refresh it after adding a resource
// type:
//
//	npm pack @aws-cdk/cfnspec@2.72.1 && tar xzf aws-cdk-cfnspec-2.72.1.tgz
//	go test ./services/gen/deploy -run TestTemplateAgainstCfnSpec -cfnspec package/spec/specification.json
var cfnspecSource = flag.String("cfnspec", "", "rewrite testdata/cfnspec.json from this specification.json")

const cfnspecFile = "testdata/cfnspec.json"

type cfnSpec struct {
	ResourceSpecificationVersion string
	ResourceTypes                map[string]cfnType
	PropertyTypes                map[string]cfnType
}

type cfnType struct {
	Properties map[string]cfnProp         `json:",omitempty"`
	Attributes map[string]json.RawMessage `json:",omitempty"`
}

type cfnProp struct {
	Required          bool   `json:",omitempty"`
	PrimitiveType     string `json:",omitempty"`
	Type              string `json:",omitempty"`
	PrimitiveItemType string `json:",omitempty"`
	ItemType          string `json:",omitempty"`
}

// newerThanSpec are properties AWS added after the committed spec
// (version 117): target tracking on metric math (2023). Their values are
// not checked against it, and the single-metric properties that the
// newer form made optional are not required.
var newerThanSpec = map[string]bool{"AWS::ApplicationAutoScaling::ScalingPolicy.CustomizedMetricSpecification.Metrics": true}

var optionalSinceSpec = map[string]bool{"AWS::ApplicationAutoScaling::ScalingPolicy.CustomizedMetricSpecification": true}

// propertyType finds a property type of a resource type, or a global one
// (Tag).
func (s cfnSpec) propertyType(resType, name string) (string, cfnType, bool) {
	if pt, ok := s.PropertyTypes[resType+"."+name]; ok {
		return resType + "." + name, pt, true
	}
	pt, ok := s.PropertyTypes[name]
	return name, pt, ok
}

func subsetSpec(t *testing.T, full cfnSpec, tpl map[string]any) cfnSpec {
	out := cfnSpec{ResourceSpecificationVersion: full.ResourceSpecificationVersion, ResourceTypes: map[string]cfnType{}, PropertyTypes: map[string]cfnType{}}
	for _, r := range tpl["Resources"].(map[string]any) {
		typ := r.(map[string]any)["Type"].(string)
		rt, ok := full.ResourceTypes[typ]
		if !ok {
			t.Fatalf("the specification has no %s", typ)
		}
		out.ResourceTypes[typ] = rt
	}
	var add func(prefix string, props map[string]cfnProp)
	add = func(prefix string, props map[string]cfnProp) {
		for _, p := range props {
			for _, n := range []string{p.Type, p.ItemType} {
				if n == "" || n == "List" || n == "Map" {
					continue
				}
				name, pt, ok := full.propertyType(prefix, n)
				if _, done := out.PropertyTypes[name]; done || !ok {
					continue
				}
				out.PropertyTypes[name] = pt
				add(prefix, pt.Properties)
			}
		}
	}
	for typ, rt := range out.ResourceTypes {
		add(typ, rt.Properties)
	}
	return out
}

// TestTemplateAgainstCfnSpec validates the committed template against
// CloudFormation's resource specification: every resource type exists,
// every required property is set, no property is unknown, every value has
// the specified shape (primitive, list, map or property type, recursively;
// an intrinsic function stands for any value), every Ref names a
// parameter, resource or pseudo parameter, and every Fn::GetAtt names an
// attribute the resource type has.
func TestTemplateAgainstCfnSpec(t *testing.T) {
	tpl := committedTemplate(t)
	if *cfnspecSource != "" {
		b, err := os.ReadFile(*cfnspecSource)
		if err != nil {
			t.Fatal(err)
		}
		var full cfnSpec
		if err := json.Unmarshal(b, &full); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", " ")
		if err := enc.Encode(subsetSpec(t, full, tpl)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfnspecFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(cfnspecFile)
	if err != nil {
		t.Fatal(err)
	}
	var spec cfnSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	for _, e := range validate(spec, tpl) {
		t.Error(e)
	}
}

func validate(spec cfnSpec, tpl map[string]any) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	res := tpl["Resources"].(map[string]any)
	params := tpl["Parameters"].(map[string]any)
	types := map[string]string{}
	for id, r := range res {
		types[id] = r.(map[string]any)["Type"].(string)
	}

	// checkRefs checks every Ref and Fn::GetAtt inside v.
	var checkRefs func(where string, v any)
	checkRefs = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["Ref"].(string); ok && len(v) == 1 {
				if _, ok := params[r]; !ok && types[r] == "" && !strings.HasPrefix(r, "AWS::") {
					fail("%s: Ref %s names nothing", where, r)
				}
			}
			if ga, ok := v["Fn::GetAtt"].([]any); ok && len(v) == 1 {
				id, attr := ga[0].(string), ga[1].(string)
				if rt, ok := spec.ResourceTypes[types[id]]; !ok {
					fail("%s: Fn::GetAtt names resource %s, which is not in the template", where, id)
				} else if _, ok := rt.Attributes[attr]; !ok {
					fail("%s: Fn::GetAtt %s.%s: %s has no attribute %s", where, id, attr, types[id], attr)
				}
			}
			if s, ok := v["Fn::Sub"].(string); ok && len(v) == 1 {
				for _, m := range strings.Split(s, "${")[1:] {
					name, _, _ := strings.Cut(m, "}")
					if strings.HasPrefix(name, "!") {
						continue
					}
					id, attr, isAtt := strings.Cut(name, ".")
					switch {
					case isAtt && types[id] == "":
						fail("%s: Fn::Sub ${%s} names no resource", where, name)
					case isAtt:
						if _, ok := spec.ResourceTypes[types[id]].Attributes[attr]; !ok {
							fail("%s: Fn::Sub ${%s}: %s has no attribute %s", where, name, types[id], attr)
						}
					case params[id] == nil && types[id] == "" && !strings.HasPrefix(id, "AWS::"):
						fail("%s: Fn::Sub ${%s} names nothing", where, name)
					}
				}
			}
			for k, x := range v {
				checkRefs(where+"."+k, x)
			}
		case []any:
			for i, x := range v {
				checkRefs(fmt.Sprintf("%s[%d]", where, i), x)
			}
		}
	}

	isIntrinsic := func(v any) bool {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return false
		}
		for k := range m {
			return k == "Ref" || strings.HasPrefix(k, "Fn::")
		}
		return false
	}
	var checkValue func(where, resType string, p cfnProp, v any)
	var checkProps func(where, resType, typeName string, props map[string]cfnProp, v any)
	checkPrimitive := func(where, prim string, v any) {
		if isIntrinsic(v) {
			return
		}
		ok := true
		switch prim {
		case "String":
			_, ok = v.(string)
		case "Integer", "Long", "Double":
			_, ok = v.(json.Number)
		case "Boolean":
			_, ok = v.(bool)
		case "Json":
			switch v.(type) {
			case map[string]any, string:
			default:
				ok = false
			}
		}
		if !ok {
			fail("%s: %v is not a %s", where, v, prim)
		}
	}
	checkValue = func(where, resType string, p cfnProp, v any) {
		switch {
		case isIntrinsic(v):
		case p.PrimitiveType != "":
			checkPrimitive(where, p.PrimitiveType, v)
		case p.Type == "List":
			list, ok := v.([]any)
			if !ok {
				fail("%s: not a list", where)
				return
			}
			for i, x := range list {
				w := fmt.Sprintf("%s[%d]", where, i)
				if p.PrimitiveItemType != "" {
					checkPrimitive(w, p.PrimitiveItemType, x)
				} else if !isIntrinsic(x) {
					checkProps(w, resType, p.ItemType, nil, x)
				}
			}
		case p.Type == "Map":
			m, ok := v.(map[string]any)
			if !ok {
				fail("%s: not a map", where)
				return
			}
			for k, x := range m {
				if p.PrimitiveItemType != "" {
					checkPrimitive(where+"."+k, p.PrimitiveItemType, x)
				} else {
					checkProps(where+"."+k, resType, p.ItemType, nil, x)
				}
			}
		default:
			checkProps(where, resType, p.Type, nil, v)
		}
	}
	checkProps = func(where, resType, typeName string, props map[string]cfnProp, v any) {
		if props == nil {
			_, pt, ok := spec.propertyType(resType, typeName)
			if !ok {
				fail("%s: the specification has no property type %s.%s", where, resType, typeName)
				return
			}
			props = pt.Properties
		}
		m, ok := v.(map[string]any)
		if !ok {
			fail("%s: not an object", where)
			return
		}
		for name, p := range props {
			if _, set := m[name]; p.Required && !set && !optionalSinceSpec[resType+"."+typeName] {
				fail("%s: required property %s is missing", where, name)
			}
		}
		for name, x := range m {
			p, ok := props[name]
			if newerThanSpec[resType+"."+typeName+"."+name] {
				continue
			}
			if !ok {
				fail("%s: unknown property %s", where, name)
				continue
			}
			checkValue(where+"."+name, resType, p, x)
		}
	}

	ids := make([]string, 0, len(res))
	for id := range res {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r := res[id].(map[string]any)
		rt, ok := spec.ResourceTypes[types[id]]
		if !ok {
			fail("%s: resource type %s is not in the specification", id, types[id])
			continue
		}
		props, _ := r["Properties"].(map[string]any)
		checkProps(id, types[id], "", rt.Properties, props)
		checkRefs(id, r)
		for _, d := range anyList(r["DependsOn"]) {
			if types[d.(string)] == "" {
				fail("%s: DependsOn %s names no resource", id, d)
			}
		}
	}
	for name, o := range tpl["Outputs"].(map[string]any) {
		checkRefs("Outputs."+name, o)
	}
	return errs
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}
