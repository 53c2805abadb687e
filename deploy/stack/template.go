package stack

import (
	"bytes"
	"encoding/json"
)

// Template is a CloudFormation template. Maps are written with sorted keys,
// so the output is deterministic.
type Template struct {
	AWSTemplateFormatVersion string               `json:"AWSTemplateFormatVersion"`
	Description              string               `json:"Description"`
	Parameters               map[string]Parameter `json:"Parameters"`
	Conditions               map[string]any       `json:"Conditions,omitempty"`
	// Mappings are lookup tables (Fn::FindInMap), such as each region's
	// Elastic Load Balancing account.
	Mappings  map[string]any      `json:"Mappings,omitempty"`
	Resources map[string]Resource `json:"Resources"`
	Outputs   map[string]Output   `json:"Outputs"`
	// Rules refuse parameter values that contradict each other before
	// anything is created.
	Rules map[string]any `json:"Rules,omitempty"`
}

// Parameter is a template parameter.
type Parameter struct {
	Type           string   `json:"Type"`
	Description    string   `json:"Description"`
	Default        *string  `json:"Default,omitempty"`
	AllowedPattern string   `json:"AllowedPattern,omitempty"`
	AllowedValues  []string `json:"AllowedValues,omitempty"`
	// ConstraintDescription is what CloudFormation says when a value
	// breaks AllowedPattern or AllowedValues (or is out of MinValue..MaxValue).
	ConstraintDescription string `json:"ConstraintDescription,omitempty"`
	// MinValue and MaxValue bound a Number parameter.
	MinValue *int `json:"MinValue,omitempty"`
	MaxValue *int `json:"MaxValue,omitempty"`
}

// Resource is one resource: its type and properties.
type Resource struct {
	Type       string         `json:"Type"`
	DependsOn  []string       `json:"DependsOn,omitempty"`
	Properties map[string]any `json:"Properties"`
	// DeletionPolicy and UpdateReplacePolicy keep data (tables, buckets)
	// when the stack is deleted or a replacement is needed.
	DeletionPolicy      string `json:"DeletionPolicy,omitempty"`
	UpdateReplacePolicy string `json:"UpdateReplacePolicy,omitempty"`
	// Condition, if set, names the condition the resource is created on.
	Condition string `json:"Condition,omitempty"`
}

// Output is a stack output.
type Output struct {
	Description string `json:"Description"`
	Value       any    `json:"Value"`
	// Condition, if set, names the condition the output exists on.
	Condition string `json:"Condition,omitempty"`
}

// JSON returns the template as indented JSON with a trailing newline.
func (t *Template) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (t *Template) add(id string, r Resource) {
	if _, dup := t.Resources[id]; dup {
		panic("stack: resource " + id + " defined twice")
	}
	if r.Properties == nil {
		r.Properties = map[string]any{}
	}
	t.Resources[id] = r
}

// Intrinsic functions.

// Ref is {"Ref": name}.
func Ref(name string) map[string]any { return map[string]any{"Ref": name} }

// GetAtt is {"Fn::GetAtt": [resource, attribute]}.
func GetAtt(resource, attr string) map[string]any {
	return map[string]any{"Fn::GetAtt": []string{resource, attr}}
}

// Sub is {"Fn::Sub": s}.
func Sub(s string) map[string]any { return map[string]any{"Fn::Sub": s} }

// Join is {"Fn::Join": [sep, parts]}.
func Join(sep string, parts ...any) map[string]any {
	return map[string]any{"Fn::Join": []any{sep, parts}}
}

// If is {"Fn::If": [cond, a, b]}.
func If(cond string, a, b any) map[string]any { return map[string]any{"Fn::If": []any{cond, a, b}} }

// FindInMap is {"Fn::FindInMap": [mapping, key, attribute]}.
func FindInMap(mapping string, key, attr any) map[string]any {
	return map[string]any{"Fn::FindInMap": []any{mapping, key, attr}}
}

// NoValue is AWS::NoValue.
var NoValue = Ref("AWS::NoValue")

// staged is name-${Stage}, the stage's copy of a resource name.
func staged(name string) map[string]any { return Sub(name + "-${Stage}") }

// tags is the stack's tag list.
func tags(component string) []any {
	return []any{
		map[string]any{"Key": "pacer:stage", "Value": Ref("Stage")},
		map[string]any{"Key": "pacer:component", "Value": component},
	}
}
