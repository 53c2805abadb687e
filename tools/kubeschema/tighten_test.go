package kubeschema

import (
	"encoding/json"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func encode(t *testing.T, m any) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTighten(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"an object is closed, its descriptions and extensions go",
			`{"type":"object","description":"d","x-kubernetes-map-type":"atomic","properties":{"a":{"type":"string","description":"d"}}}`,
			`{"additionalProperties":false,"properties":{"a":{"type":"string"}},"type":"object"}`},
		{"a nested object is closed, in items and additionalProperties too",
			`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer"}}}},"m":{"type":"object","additionalProperties":{"type":"object","properties":{"c":{"type":"boolean"}}}}}}`,
			`{"additionalProperties":false,"properties":{"l":{"items":{"additionalProperties":false,"properties":{"b":{"type":"integer"}},"type":"object"},"type":"array"},"m":{"additionalProperties":{"additionalProperties":false,"properties":{"c":{"type":"boolean"}},"type":"object"},"type":"object"}},"type":"object"}`},
		{"x-kubernetes-preserve-unknown-fields keeps it open",
			`{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string"}}}`,
			`{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{"an object without properties (a free map) stays open", `{"type":"object"}`, `{"type":"object"}`},
		{"int-or-string, as a CRD says it", `{"x-kubernetes-int-or-string":true}`, `{"type":["string","integer"]}`},
		{"int-or-string, as OpenAPI v2 says it", `{"type":"string","format":"int-or-string"}`, `{"type":["string","integer"]}`},
		{"nullable", `{"type":"string","nullable":true}`, `{"type":["string","null"]}`},
		{"a field named description is a field", `{"type":"object","properties":{"description":{"type":"string"}}}`,
			`{"additionalProperties":false,"properties":{"description":{"type":"string"}},"type":"object"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := decode(t, c.in)
			tighten(s)
			if got := encode(t, s); got != c.want {
				t.Errorf("tighten(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
}

func TestNullOptional(t *testing.T) {
	s := decode(t, `{"type":"object","required":["r"],"properties":{"r":{"type":"string"},"o":{"type":"string"},"ref":{"$ref":"#/definitions/X"},
		"l":{"type":"array","items":{"type":"object","properties":{"i":{"type":"integer"}}}}}}`)
	nullOptional(s)
	want := `{"properties":{"l":{"items":{"properties":{"i":{"type":["integer","null"]}},"type":"object"},"type":["array","null"]},"o":{"type":["string","null"]},"r":{"type":"string"},"ref":{"$ref":"#/definitions/X"}},"required":["r"],"type":"object"}`
	if got := encode(t, s); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestStandalone(t *testing.T) {
	defs := map[string]any{
		"Meta":  decode(t, `{"type":"object","properties":{"name":{"type":"string"}}}`),
		"Props": decode(t, `{"type":"object","properties":{"not":{"$ref":"#/definitions/Props"},"$ref":{"type":"string"}}}`),
	}
	root := decode(t, `{"type":"object","properties":{"metadata":{"$ref":"#/definitions/Meta"},"schema":{"$ref":"#/definitions/Props"}}}`)
	got := encode(t, standalone(root, defs, "example.com/v1", "Thing"))
	want := `{"definitions":{"Props":{"properties":{"$ref":{"type":"string"},"not":{"$ref":"#/definitions/Props"}},"type":"object"}},` +
		`"properties":{"apiVersion":{"enum":["example.com/v1"],"type":"string"},"kind":{"enum":["Thing"],"type":"string"},` +
		`"metadata":{"properties":{"name":{"type":"string"}},"type":"object"},` +
		`"schema":{"properties":{"$ref":{"type":"string"},"not":{"$ref":"#/definitions/Props"}},"type":"object"}},"type":"object"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, ok := root["definitions"]; ok || len(asMap(root["properties"])) != 2 {
		t.Errorf("standalone changed its argument: %s", encode(t, root))
	}
}
