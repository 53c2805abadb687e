package kubeschema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The modules the schemas come from, and where in them.
const (
	kubernetesModule = "k8s.io/kubernetes"
	swaggerFile      = "api/openapi-spec/swagger.json"
	kedaModule       = "github.com/kedacore/keda/v2"
	kedaCRDs         = "config/crd/bases"
)

// Build writes the schemas of c's versions into c.Folder(), unless they
// are there already, printing its progress to progress. The first build
// downloads the two modules (about 18 MB and 3 MB) into the Go module
// cache; it writes a new folder and renames it into place, so that an
// interrupted or concurrent build leaves no half a folder behind.
func Build(ctx context.Context, c Config, progress io.Writer) error {
	k8s, keda := c.versions()
	folder := c.Folder()
	if _, err := os.Stat(folder); err == nil {
		return nil
	}
	began := time.Now()
	fmt.Fprintf(progress, "kubeschema: building the schemas of Kubernetes %s and KEDA %s into %s\n", k8s, keda, folder)
	kinds, err := sources(ctx, k8s, keda, progress)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(c.Dir, "building-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // left only when the build fails
	for i, k := range kinds {
		if err := writeSchema(schemaFile(tmp, k), k.Schema); err != nil {
			return err
		}
		if n := i + 1; n%50 == 0 || n == len(kinds) {
			fmt.Fprintf(progress, "kubeschema: %d of %d schemas written and compiled\n", n, len(kinds))
		}
	}
	if err := os.Rename(tmp, folder); err != nil {
		if _, statErr := os.Stat(folder); statErr == nil {
			return nil // built meanwhile by another build
		}
		return err
	}
	fmt.Fprintf(progress, "kubeschema: %d schemas in %s (%.1f s)\n", len(kinds), folder, time.Since(began).Seconds())
	return nil
}

// sources downloads the modules and converts their documents into one
// schema per group/version/kind, sorted.
func sources(ctx context.Context, k8s, keda string, progress io.Writer) ([]kindSchema, error) {
	fmt.Fprintf(progress, "kubeschema: go mod download %s@%s (about 18 MB, cached after the first time)\n", kubernetesModule, k8s)
	dir, err := downloadModule(ctx, kubernetesModule, k8s)
	if err != nil {
		return nil, err
	}
	swagger, err := os.ReadFile(filepath.Join(dir, swaggerFile))
	if err != nil {
		return nil, err
	}
	defs, kinds, err := openAPIDefinitions(swagger)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "kubeschema: %d built-in kinds from %s; go mod download %s@%s\n", len(kinds), swaggerFile, kedaModule, keda)
	if dir, err = downloadModule(ctx, kedaModule, keda); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, kedaCRDs, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("kubeschema: no CRDs in %s@%s/%s (%v)", kedaModule, keda, kedaCRDs, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		ks, err := crdKinds(b, defs)
		if err != nil {
			return nil, fmt.Errorf("kubeschema: %s: %w", filepath.Base(f), err)
		}
		kinds = append(kinds, ks...)
	}
	fmt.Fprintf(progress, "kubeschema: %d kinds with KEDA's %d CRDs\n", len(kinds), len(files))
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].apiVersion()+kinds[i].Kind < kinds[j].apiVersion()+kinds[j].Kind })
	return kinds, nil
}

// writeSchema writes a schema to path after compiling it as kubeconform
// will (draft 4): kubeconform takes a schema that does not compile for a
// missing one.
func writeSchema(path string, s map[string]any) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft4)
	if err := comp.AddResource(path, doc); err != nil {
		return err
	}
	if _, err := comp.Compile(path); err != nil {
		return fmt.Errorf("kubeschema: %s does not compile: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
