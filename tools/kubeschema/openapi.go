package kubeschema

import (
	"encoding/json"
	"fmt"
)

// kindSchema is the standalone schema of one group/version/kind.
type kindSchema struct {
	Group, Version, Kind string
	Schema               map[string]any
}

// apiVersion is the kind's apiVersion field: group/version, or the version
// alone in the core group.
func (k kindSchema) apiVersion() string {
	if k.Group == "" {
		return k.Version
	}
	return k.Group + "/" + k.Version
}

// Definitions whose OpenAPI type is looser than what the API server takes.
const (
	quantityDef    = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	intOrStringDef = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
	objectMetaDef  = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
)

// openAPIDefinitions reads Kubernetes's OpenAPI v2 document (swagger.json)
// into its definitions, tightened (see tighten), and the kinds they
// define (x-kubernetes-group-version-kind).
func openAPIDefinitions(swagger []byte) (defs map[string]any, kinds []kindSchema, err error) {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(swagger, &doc); err != nil {
		return nil, nil, fmt.Errorf("kubeschema: swagger.json: %w", err)
	}
	if len(doc.Definitions) == 0 || doc.Definitions[objectMetaDef] == nil {
		return nil, nil, fmt.Errorf("kubeschema: swagger.json has no definitions (or no %s)", objectMetaDef)
	}
	type gvk struct{ Group, Version, Kind string }
	defs = map[string]any{}
	owners := map[string][]gvk{}
	for name, d := range doc.Definitions {
		for _, g := range asList(d["x-kubernetes-group-version-kind"]) {
			g := asMap(g)
			owners[name] = append(owners[name], gvk{fmt.Sprint(g["group"]), fmt.Sprint(g["version"]), fmt.Sprint(g["kind"])})
		}
		switch name {
		case quantityDef: // "1", 1, "250m", 0.5
			d = map[string]any{"type": []any{"string", "number"}}
		case intOrStringDef:
			d = map[string]any{"type": []any{"string", "integer"}}
		}
		tighten(d)
		nullOptional(d)
		defs[name] = d
	}
	for name, gs := range owners {
		for _, g := range gs {
			k := kindSchema{Group: g.Group, Version: g.Version, Kind: g.Kind}
			k.Schema = standalone(asMap(defs[name]), defs, k.apiVersion(), g.Kind)
			kinds = append(kinds, k)
		}
	}
	return defs, kinds, nil
}
