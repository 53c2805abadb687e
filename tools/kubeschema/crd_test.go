package kubeschema

import (
	"strings"
	"testing"
)

const testCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  names:
    kind: Thing
  versions:
  - name: v1
    served: true
    schema:
      openAPIV3Schema:
        description: A thing.
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            required: [size]
            properties:
              size: {x-kubernetes-int-or-string: true}
              note: {type: string, nullable: true}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: v0
    served: false
    schema:
      openAPIV3Schema: {type: object}
`

func TestCRDKinds(t *testing.T) {
	defs := map[string]any{objectMetaDef: decode(t, `{"type":"object","additionalProperties":false,"properties":{"name":{"type":"string"}}}`)}
	kinds, err := crdKinds([]byte(testCRD), defs)
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 1 || kinds[0].apiVersion() != "example.com/v1" || kinds[0].Kind != "Thing" {
		t.Fatalf("got %+v, want the served version only, example.com/v1 Thing", kinds)
	}
	got := encode(t, kinds[0].Schema)
	want := `{"additionalProperties":false,"properties":{"apiVersion":{"enum":["example.com/v1"],"type":"string"},"kind":{"enum":["Thing"],"type":"string"},` +
		`"metadata":{"additionalProperties":false,"properties":{"name":{"type":"string"}},"type":"object"},` +
		`"spec":{"additionalProperties":false,"properties":{"extra":{"type":"object"},"note":{"type":["string","null"]},"size":{"type":["string","integer"]}},"required":["size"],"type":"object"}},"type":"object"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := crdKinds([]byte("apiVersion: v1\nkind: ConfigMap\n"), defs); err == nil || !strings.Contains(err.Error(), "not a CustomResourceDefinition") {
		t.Errorf("a ConfigMap: err %v, want not a CustomResourceDefinition", err)
	}
}
