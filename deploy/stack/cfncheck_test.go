package stack_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// pseudoParameters are the names a Ref or ${} can take besides the
// template's parameters and resources.
var pseudoParameters = map[string]bool{
	"AWS::AccountId": true, "AWS::NotificationARNs": true, "AWS::NoValue": true, "AWS::Partition": true,
	"AWS::Region": true, "AWS::StackId": true, "AWS::StackName": true, "AWS::URLSuffix": true,
}

// intrinsics are CloudFormation's functions (and Ref). stringIntrinsics
// always produce a string: one cannot stand for a list or an object.
var (
	intrinsics = map[string]bool{
		"Ref": true, "Fn::GetAtt": true, "Fn::Sub": true, "Fn::Join": true, "Fn::If": true, "Fn::Select": true,
		"Fn::Split": true, "Fn::FindInMap": true, "Fn::ImportValue": true, "Fn::Base64": true, "Fn::Cidr": true,
		"Fn::GetAZs": true, "Fn::Length": true, "Fn::ToJsonString": true, "Fn::Transform": true,
		"Fn::And": true, "Fn::Equals": true, "Fn::Not": true, "Fn::Or": true,
	}
	stringIntrinsics = map[string]bool{"Fn::Sub": true, "Fn::Join": true, "Fn::Base64": true, "Fn::ImportValue": true}
)

// resourceKeys are the keys a resource may have besides Type.
var resourceKeys = map[string]bool{
	"Type": true, "Properties": true, "DependsOn": true, "Condition": true, "DeletionPolicy": true,
	"UpdateReplacePolicy": true, "Metadata": true, "CreationPolicy": true, "UpdatePolicy": true,
}

// The policies CloudFormation takes: RetainExceptOnCreate is a
// DeletionPolicy only (an UpdateReplacePolicy of it is refused).
var policies = map[string]map[string]bool{
	"DeletionPolicy":      {"Delete": true, "Retain": true, "RetainExceptOnCreate": true, "Snapshot": true},
	"UpdateReplacePolicy": {"Delete": true, "Retain": true, "Snapshot": true},
}

// templateCheck checks a CloudFormation template against the resource
// specification; each problem it finds is a line in findings, prefixed by
// where it is (Resource.Property.SubProperty[index]).
type templateCheck struct {
	spec       *resourceSpec
	params     map[string]bool
	conditions map[string]bool
	mappings   map[string]bool
	types      map[string]string // logical id → resource type
	findings   []string
}

// checkTemplate returns what is wrong with tpl (decoded with UseNumber):
// unknown resource types and properties, missing required properties,
// values of the wrong type (an intrinsic function stands for any value,
// and each branch of an Fn::If is checked), and Refs, Fn::GetAtts,
// ${} in Fn::Subs, conditions, mappings and DependsOn that name nothing.
func checkTemplate(spec *resourceSpec, tpl map[string]any) []string {
	c := &templateCheck{spec: spec, params: keys(tpl["Parameters"]), conditions: keys(tpl["Conditions"]),
		mappings: keys(tpl["Mappings"]), types: map[string]string{}}
	res, _ := tpl["Resources"].(map[string]any)
	for id, r := range res {
		typ, _ := asMap(r)["Type"].(string)
		c.types[id] = typ
	}
	conds, _ := tpl["Conditions"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(conds)) {
		c.refs("Conditions."+name, conds[name], true)
	}
	for _, id := range slices.Sorted(maps.Keys(res)) {
		c.resource(id, asMap(res[id]))
	}
	outs, _ := tpl["Outputs"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(outs)) {
		o := asMap(outs[name])
		c.condition("Outputs."+name, o["Condition"])
		c.refs("Outputs."+name, o, false)
	}
	return c.findings
}

func (c *templateCheck) fail(format string, args ...any) {
	c.findings = append(c.findings, fmt.Sprintf(format, args...))
}

// resource checks one resource: its keys, type, properties, condition,
// policies, DependsOn and the names its functions use.
func (c *templateCheck) resource(id string, r map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(r)) {
		if !resourceKeys[k] {
			c.fail("%s: unknown resource attribute %s", id, k)
		}
	}
	c.condition(id, r["Condition"])
	for _, k := range []string{"DeletionPolicy", "UpdateReplacePolicy"} {
		if p, set := r[k]; set && !policies[k][fmt.Sprint(p)] {
			c.fail("%s: %s %v is not one of %s", id, k, p, strings.Join(slices.Sorted(maps.Keys(policies[k])), ", "))
		}
	}
	deps := r["DependsOn"]
	if d, ok := deps.(string); ok {
		deps = []any{d}
	}
	for _, d := range asList(deps) {
		if c.types[fmt.Sprint(d)] == "" {
			c.fail("%s: DependsOn %v names no resource", id, d)
		}
	}
	c.refs(id, r["Properties"], false)
	typ := c.types[id]
	switch {
	case typ == "":
		c.fail("%s: no Type", id)
	case strings.HasPrefix(typ, "Custom::"):
		// A custom resource's properties are its provider's business.
	case c.spec.resources[typ] == nil:
		c.fail("%s: resource type %s is not in CloudFormation's specification", id, typ)
	default:
		props := r["Properties"]
		if props == nil {
			props = map[string]any{}
		}
		c.object(id, typ, c.spec.resources[typ].Properties, props)
	}
}

// condition checks that a Condition key (absent, or a condition's name)
// names a condition of the template.
func (c *templateCheck) condition(where string, v any) {
	if v == nil {
		return
	}
	if name, ok := v.(string); !ok || !c.conditions[name] {
		c.fail("%s: Condition %v names no condition", where, v)
	}
}

// object checks v against a structure of properties: every required one
// set, none unknown, each value of its property's type.
func (c *templateCheck) object(where, typeName string, props map[string]specProp, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail("%s: %s is not an object (%s)", where, describe(v), typeName)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if _, set := m[name]; props[name].Required && !set {
			c.fail("%s: required property %s (of %s) is missing", where, name, typeName)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		p, ok := props[name]
		if !ok {
			c.fail("%s: unknown property %s (%s has %s)", where, name, typeName, strings.Join(slices.Sorted(maps.Keys(props)), ", "))
			continue
		}
		c.property(where+"."+name, p, m[name])
	}
}

// property checks a value against its property's type, or failing that
// against a type the property had before (CloudFormation still takes it).
func (c *templateCheck) property(where string, p specProp, v any) {
	got := c.fits(where, p.Type, v)
	if len(got) == 0 {
		return
	}
	for _, prev := range p.PreviousTypes {
		if len(c.fits(where, prev, v)) == 0 {
			return
		}
	}
	c.findings = append(c.findings, got...)
}

// fits returns what value would find wrong with v, leaving findings as
// they were.
func (c *templateCheck) fits(where string, t specType, v any) []string {
	saved := c.findings
	c.findings = nil
	c.value(where, t, v)
	got := c.findings
	c.findings = saved
	return got
}

// value checks v against a value type (see specType).
func (c *templateCheck) value(where string, t specType, v any) {
	if c.intrinsic(where, t, v) {
		return
	}
	switch t.Type {
	case "string", "date-time":
		c.want(where, t, v, isString(v))
		c.allowed(where, t, v)
	case "integer":
		n, ok := v.(json.Number)
		_, err := n.Int64()
		c.want(where, t, v, ok && err == nil)
		c.allowed(where, t, v)
	case "number":
		_, ok := v.(json.Number)
		c.want(where, t, v, ok)
	case "boolean":
		_, ok := v.(bool)
		c.want(where, t, v, ok)
	case "json":
		_, ok := v.(map[string]any)
		c.want(where, t, v, ok || isString(v))
	case "tag":
		c.object(where, "Tag", map[string]specProp{"Key": {Type: specType{Type: "string"}, Required: true},
			"Value": {Type: specType{Type: "string"}, Required: true}}, v)
	case "array", "map":
		c.collection(where, t, v)
	case "ref":
		td := c.spec.types[t.Reference.ID]
		if td == nil {
			c.fail("%s: the specification has no property type %s", where, t.Reference.ID)
			return
		}
		c.object(where, td.Name, td.Properties, v)
	case "union":
		c.union(where, t, v)
	default:
		c.fail("%s: the specification's type %q is not known to this check", where, t.Type)
	}
}

// want records that v is not of type t unless ok.
func (c *templateCheck) want(where string, t specType, v any, ok bool) {
	if !ok {
		c.fail("%s: %s is not %s", where, describe(v), article(typeName(c.spec, t)))
	}
}

// allowed checks a string or integer against the type's allowed values,
// when it has some.
func (c *templateCheck) allowed(where string, t specType, v any) {
	var x any
	switch v := v.(type) {
	case string:
		x = v
	case json.Number:
		x, _ = v.Float64() // the database's numbers are decoded as float64
	default:
		return // not a string or a number: want has said so
	}
	if len(t.AllowedValues) > 0 && !slices.Contains(t.AllowedValues, x) {
		c.fail("%s: %s is not one of %s", where, describe(v), describe(t.AllowedValues))
	}
}

// collection checks a list (array) or an object (map) and each of its
// elements.
func (c *templateCheck) collection(where string, t specType, v any) {
	if t.Type == "array" {
		l, ok := v.([]any)
		if !ok {
			c.fail("%s: %s is not a list (%s)", where, describe(v), typeName(c.spec, t))
			return
		}
		for i, x := range l {
			c.value(fmt.Sprintf("%s[%d]", where, i), *t.Element, x)
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.fail("%s: %s is not a map (%s)", where, describe(v), typeName(c.spec, t))
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		c.value(where+"."+k, *t.Element, m[k])
	}
}

// union accepts v when it fits any of the union's types.
func (c *templateCheck) union(where string, t specType, v any) {
	for _, alt := range t.Types {
		if len(c.fits(where, alt, v)) == 0 {
			return
		}
	}
	c.fail("%s: %s is not %s", where, describe(v), article(typeName(c.spec, t)))
}

// intrinsic reports whether v is a function call (or Ref), which stands
// for a value of type t; each branch of an Fn::If is checked against t
// (AWS::NoValue removes the property), and a function that produces a
// string cannot stand for a list, a map or an object.
func (c *templateCheck) intrinsic(where string, t specType, v any) bool {
	name, arg, ok := call(v)
	if !ok {
		return false
	}
	switch {
	case !intrinsics[name]:
		c.fail("%s: %s is not a CloudFormation function", where, name)
	case name == "Fn::If":
		branches := asList(arg)
		if len(branches) != 3 {
			c.fail("%s: Fn::If takes [condition, then, else], not %s", where, describe(arg))
			return true
		}
		for i, b := range branches[1:] {
			if n, a, _ := call(b); n == "Ref" && a == "AWS::NoValue" {
				continue
			}
			c.value(fmt.Sprintf("%s{Fn::If %v %s}", where, branches[0], []string{"then", "else"}[i]), t, b)
		}
	case stringIntrinsics[name] && t.Type != "string" && t.Type != "json" && t.Type != "union" && t.Type != "date-time":
		c.fail("%s: %s produces a string, not a %s", where, name, typeName(c.spec, t))
	}
	return true
}

// refs checks the names used inside v: each Ref names a parameter, a
// resource or a pseudo parameter (in Conditions: not a resource), each
// Fn::GetAtt a resource and an attribute its type has, each ${} of an
// Fn::Sub likewise, each Fn::If's and Condition's name a condition, each
// Fn::FindInMap a mapping.
func (c *templateCheck) refs(where string, v any, inConditions bool) {
	if name, arg, ok := call(v); ok {
		switch name {
		case "Ref":
			c.ref(where, arg, inConditions)
		case "Fn::GetAtt":
			c.getAtt(where, arg)
		case "Fn::Sub":
			c.sub(where, arg)
		case "Fn::If":
			c.condition(where+".Fn::If", first(arg))
		case "Condition":
			if inConditions {
				c.condition(where, arg)
			}
		case "Fn::FindInMap":
			if m, ok := first(arg).(string); ok && !c.mappings[m] {
				c.fail("%s: Fn::FindInMap names mapping %s, which the template does not have", where, m)
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c.refs(where+"."+k, v[k], inConditions)
		}
	case []any:
		for i, x := range v {
			c.refs(fmt.Sprintf("%s[%d]", where, i), x, inConditions)
		}
	}
}

func (c *templateCheck) ref(where string, arg any, inConditions bool) {
	name, ok := arg.(string)
	switch {
	case !ok:
		c.fail("%s: Ref takes a name, not %s", where, describe(arg))
	case c.params[name] || pseudoParameters[name]:
	case c.types[name] != "" && inConditions:
		c.fail("%s: Ref %s: a condition can only Ref a parameter", where, name)
	case c.types[name] == "":
		c.fail("%s: Ref %s names no parameter, resource or pseudo parameter", where, name)
	}
}

// getAtt checks [resource, attribute] or "resource.attribute".
func (c *templateCheck) getAtt(where string, arg any) {
	var id, attr string
	switch a := arg.(type) {
	case string:
		id, attr, _ = strings.Cut(a, ".")
	case []any:
		if len(a) != 2 {
			c.fail("%s: Fn::GetAtt takes [resource, attribute], not %s", where, describe(arg))
			return
		}
		id, _ = a[0].(string)
		if attr, _ = a[1].(string); attr == "" {
			return // an attribute given by a function
		}
	default:
		c.fail("%s: Fn::GetAtt takes [resource, attribute], not %s", where, describe(arg))
		return
	}
	c.attribute(where, "Fn::GetAtt "+id+"."+attr, id, attr)
}

// attribute checks that resource id exists and its type has attr.
func (c *templateCheck) attribute(where, what, id, attr string) {
	typ := c.types[id]
	switch rt := c.spec.resources[typ]; {
	case typ == "":
		c.fail("%s: %s names no resource", where, what)
	case strings.HasPrefix(typ, "Custom::") || rt == nil:
		// Any attribute of a custom resource; an unknown type is reported once, on the resource.
	default:
		if _, ok := rt.Attributes[attr]; !ok {
			c.fail("%s: %s: %s has no attribute %s (it has %s)", where, what, typ, attr, strings.Join(slices.Sorted(maps.Keys(rt.Attributes)), ", "))
		}
	}
}

// sub checks each ${Name} and ${Resource.Attribute} of an Fn::Sub's
// string (${!Literal} is text) against its variables and the template.
func (c *templateCheck) sub(where string, arg any) {
	s, vars := arg, map[string]any(nil)
	if l, ok := arg.([]any); ok && len(l) == 2 {
		s, vars = l[0], asMap(l[1])
	}
	str, ok := s.(string)
	if !ok {
		c.fail("%s: Fn::Sub takes a string or [string, variables], not %s", where, describe(arg))
		return
	}
	for _, part := range strings.Split(str, "${")[1:] {
		name, _, closed := strings.Cut(part, "}")
		switch id, attr, isAtt := strings.Cut(name, "."); {
		case strings.HasPrefix(name, "!"):
		case !closed:
			c.fail("%s: Fn::Sub %q has an unclosed ${", where, str)
		case vars[name] != nil || c.params[name] || pseudoParameters[name]:
		case isAtt:
			c.attribute(where, "Fn::Sub ${"+name+"}", id, attr)
		case c.types[name] == "":
			c.fail("%s: Fn::Sub ${%s} names no parameter, resource, pseudo parameter or variable", where, name)
		}
	}
}

// call returns the function and argument of a one-key object whose key
// is Ref, Condition or Fn::….
func call(v any) (string, any, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", nil, false
	}
	for k, arg := range m {
		if k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::") {
			return k, arg, true
		}
	}
	return "", nil, false
}

// typeName names a value type for a message.
func typeName(spec *resourceSpec, t specType) string {
	switch t.Type {
	case "array":
		return "list of " + typeName(spec, *t.Element)
	case "map":
		return "map of " + typeName(spec, *t.Element)
	case "ref":
		if td := spec.types[t.Reference.ID]; td != nil {
			return td.Name
		}
	case "union":
		var alts []string
		for _, a := range t.Types {
			alts = append(alts, typeName(spec, a))
		}
		return strings.Join(alts, " or ")
	}
	return t.Type
}

// article puts "a" or "an" before a type's name.
func article(name string) string {
	if strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// describe shows a value briefly, for a message.
func describe(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func first(v any) any {
	if l := asList(v); len(l) > 0 {
		return l[0]
	}
	return nil
}

func keys(v any) map[string]bool {
	out := map[string]bool{}
	for k := range asMap(v) {
		out[k] = true
	}
	return out
}
