package kubeschema

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// crdKinds reads a CustomResourceDefinition (YAML) into the schema of
// each version it serves, tightened (see tighten), with metadata checked
// as Kubernetes's ObjectMeta (from defs, openAPIDefinitions's).
func crdKinds(doc []byte, defs map[string]any) ([]kindSchema, error) {
	var crd struct {
		Kind string `json:"kind"`
		Spec struct {
			Group string `json:"group"`
			Names struct {
				Kind string `json:"kind"`
			} `json:"names"`
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	j, err := yaml.YAMLToJSON(doc)
	if err == nil {
		err = json.Unmarshal(j, &crd)
	}
	if err != nil {
		return nil, err
	}
	if crd.Kind != "CustomResourceDefinition" || crd.Spec.Group == "" || crd.Spec.Names.Kind == "" {
		return nil, fmt.Errorf("not a CustomResourceDefinition with a group and a kind")
	}
	var out []kindSchema
	for _, v := range crd.Spec.Versions {
		s := v.Schema.OpenAPIV3Schema
		if !v.Served || s == nil {
			continue
		}
		tighten(s)
		if props := asMap(s["properties"]); props != nil {
			props["metadata"] = map[string]any{"$ref": "#/definitions/" + objectMetaDef}
		}
		k := kindSchema{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
		k.Schema = standalone(s, defs, k.apiVersion(), k.Kind)
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no served version with a schema", crd.Spec.Names.Kind)
	}
	return out, nil
}
