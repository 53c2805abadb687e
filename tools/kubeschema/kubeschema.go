// Package kubeschema builds, offline, the JSON schemas that kubeconform
// validates Pacer's Kubernetes manifests (deploy/k8s) against, and runs
// that validation.
//
// The schemas come from pinned Go modules, fetched through the Go module
// proxy (and its checksum database) with `go mod download`: Kubernetes's
// own OpenAPI document (api/openapi-spec/swagger.json of k8s.io/kubernetes)
// for the built-in kinds, and KEDA's CRDs (config/crd/bases of
// github.com/kedacore/keda/v2) for ScaledObject, TriggerAuthentication and
// the rest of keda.sh. Each group/version/kind gets one standalone,
// strict schema (every object closed to unknown fields, as
// openapi2jsonschema's -strict makes them):
//
//	err := kubeschema.Build(ctx, kubeschema.Config{Dir: ".cache/kubeschema"}, os.Stdout)
//	findings, err := kubeschema.Validate(kubeschema.Config{Dir: ".cache/kubeschema"}, "deploy/k8s/keda.yaml", f)
package kubeschema

import (
	"path/filepath"
)

// The pinned sources of the schemas. Changing one rebuilds the schemas
// into a folder of their own.
const (
	// Kubernetes is the k8s.io/kubernetes module version whose OpenAPI
	// document gives the built-in kinds.
	Kubernetes = "v1.34.4"
	// KEDA is the github.com/kedacore/keda/v2 module version whose CRDs
	// give keda.sh's kinds.
	KEDA = "v2.21.0"
	// format names the conversion: bump it when a change to this package
	// changes the schemas it writes, so that Build writes them anew.
	format = "1"
)

// Config says where the schemas are and from which versions.
type Config struct {
	// Dir holds the schemas, in a folder per pair of versions (made by
	// Build). Required.
	Dir string
	// Kubernetes and KEDA override the pinned versions (tests).
	Kubernetes, KEDA string
}

func (c Config) versions() (k8s, keda string) {
	k8s, keda = c.Kubernetes, c.KEDA
	if k8s == "" {
		k8s = Kubernetes
	}
	if keda == "" {
		keda = KEDA
	}
	return k8s, keda
}

// Folder is the folder of the schemas of c's versions.
func (c Config) Folder() string {
	k8s, keda := c.versions()
	return filepath.Join(c.Dir, "kubernetes-"+k8s+"_keda-"+keda+"_format-"+format)
}

// location is kubeconform's schema location template for Folder: one file
// per group (the first part of apiVersion; "v1" for the core group), kind
// and version.
func (c Config) location() string {
	return filepath.Join(c.Folder(), "{{ .Group }}", "{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json")
}

// schemaFile is where the schema of k is written under folder, as
// location finds it.
func schemaFile(folder string, k kindSchema) string {
	dir := k.Group
	if dir == "" {
		dir = k.Version
	}
	return filepath.Join(folder, dir, lower(k.Kind)+"_"+k.Version+".json")
}
