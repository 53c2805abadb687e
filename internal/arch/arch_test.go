package arch

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// goList runs `go list` with args in the module and decodes its JSON stream.
func goList(t *testing.T, args ...string) []listed {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,TestImports,XTestImports,Deps"}, args...)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

type listed struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
	Deps                               []string
}

func rel(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if r, ok := strings.CutPrefix(p, Module+"/"); ok {
			p = r
		}
		out = append(out, p)
	}
	return out
}

// TestImportRules checks every package of the module against the rules.
func TestImportRules(t *testing.T) {
	listedPkgs := goList(t, "./...")
	if len(listedPkgs) < 10 {
		t.Fatalf("go list found %d packages; expected the whole module", len(listedPkgs))
	}
	var pkgs []Package
	for _, p := range listedPkgs {
		pkgs = append(pkgs, Package{
			Path:    strings.TrimPrefix(p.ImportPath, Module+"/"),
			Imports: rel(p.Imports),
			Tests:   rel(append(append([]string(nil), p.TestImports...), p.XTestImports...)),
		})
	}
	for _, v := range Check(pkgs) {
		t.Error(v)
	}
}

// TestWorkerLinksNoHTTPFramework: the worker binary has no HTTP API, so it
// must not carry Huma, JWT verification or Postgres code.
func TestWorkerLinksNoHTTPFramework(t *testing.T) {
	pkgs := goList(t, "./services/asyncevent-worker")
	if len(pkgs) != 1 {
		t.Fatalf("go list ./services/asyncevent-worker: %d packages", len(pkgs))
	}
	for _, dep := range pkgs[0].Deps {
		for _, banned := range []string{"github.com/danielgtaylor/huma", "github.com/golang-jwt/jwt", "github.com/jackc/pgx"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("asyncevent-worker links %s (from %s)", dep, banned)
			}
		}
	}
}

// deployedBinaries are the binaries the deployment runs: the containers of
// deploy/k8s (the generator's output, which make deploy-check keeps
// current), so a new binary is covered once it is deployed.
func deployedBinaries(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../deploy/k8s/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("deploy/k8s: %v %v", files, err)
	}
	var bins []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc struct {
				Kind string
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct{ Name string }
						}
					}
				}
			}
			if err := dec.Decode(&doc); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if doc.Kind == "Deployment" {
				for _, c := range doc.Spec.Template.Spec.Containers {
					bins = append(bins, c.Name)
				}
			}
		}
	}
	if len(bins) < 4 {
		t.Fatalf("deploy/k8s deploys %v; want the four binaries at least", bins)
	}
	return bins
}

// deps are the packages binary services/<bin> links.
func deps(t *testing.T, bin string) []string {
	t.Helper()
	pkgs := goList(t, "./services/"+bin)
	if len(pkgs) != 1 {
		t.Fatalf("go list ./services/%s: %d packages", bin, len(pkgs))
	}
	return pkgs[0].Deps
}

// The binaries the deployment runs link no test kit, stand-in, capacity
// simulator or dev-stack code.
func TestProductBinariesLinkNoTestOrDevCode(t *testing.T) {
	for _, bin := range deployedBinaries(t) {
		for _, dep := range deps(t, bin) {
			if why := NotProduct(dep); why != "" {
				t.Errorf("%s links %s: %s", bin, dep, why)
			}
		}
	}
}

// The binaries the deployment runs carry their CA roots and time zones
// (Fallback): their images have no CA bundle and no zoneinfo.
func TestDeployedBinariesCarryRootsAndZones(t *testing.T) {
	for _, bin := range deployedBinaries(t) {
		linked := deps(t, bin)
		for _, want := range []string{Module + "/" + Fallback, "golang.org/x/crypto/x509roots/fallback", "time/tzdata"} {
			if !slices.Contains(linked, want) {
				t.Errorf("%s does not link %s: import _ %q in its main.go", bin, want, Module+"/"+Fallback)
			}
		}
	}
}

// NotProduct refuses what it should and lets product code through.
func TestNotProduct(t *testing.T) {
	for pkg, refused := range map[string]bool{
		"modules/asyncevent/asynceventtest": true, "sdk/ddb/ddbtest": true, "services/internal/testkit/spectest": true,
		"services/internal/metrics/metricstest": true, "internal/testbin": true, "services/internal/testkit/proctest": true,
		"services/internal/testkit/browsertest": true, "services/internal/testkit/smuggletest": true, "services/internal/testkit/iamtest": true,
		"sdk/standin": true, "sdk/ddb/capacity": true, "internal/awsfixture": true, "services/dev": true, "services/dev/workerpool": true,
		"modules/asyncevent": false, "sdk/ddb": false, "sdk/ddb/stream": false, "services/internal/metrics": false,
		"services/internal/asynceventworker": false,
	} {
		if got := NotProduct(Module+"/"+pkg) != ""; got != refused {
			t.Errorf("NotProduct(%s) refuses: %v, want %v", pkg, got, refused)
		}
	}
	for pkg, refused := range map[string]bool{
		"testing": true, "testing/fstest": true, "net/http/httptest": true, "internal/synctest": false, "net/http": false,
		"github.com/aws/aws-sdk-go-v2/aws": false,
	} {
		if got := NotProduct(pkg) != ""; got != refused {
			t.Errorf("NotProduct(%s) refuses: %v, want %v", pkg, got, refused)
		}
	}
}

// TestRulesCatchViolations shows that each rule refuses what it should and
// allows what it should, on made-up packages.
func TestRulesCatchViolations(t *testing.T) {
	cases := []struct {
		name    string
		pkg     Package
		refused []string
	}{
		{"domain root imports sdk", Package{Path: "modules/photo", Imports: []string{"context", "github.com/oklog/ulid/v2", "sdk/ddb"}}, []string{"sdk/ddb"}},
		{"domain root imports an AWS package", Package{Path: "modules/asyncevent", Imports: []string{"github.com/aws/aws-sdk-go-v2/aws"}}, []string{"github.com/aws/aws-sdk-go-v2/aws"}},
		{"domain root imports deploy code", Package{Path: "modules/asyncevent", Imports: []string{"deploy/alarm"}}, []string{"deploy/alarm"}},
		{"domain root tests may use stand-ins", Package{Path: "modules/photo", Tests: []string{"sdk/standin"}}, nil},
		{"module imports another module", Package{Path: "modules/photo/dynamostore", Imports: []string{"modules/asyncevent", "modules/photo", "sdk/ddb"}}, []string{"modules/asyncevent"}},
		{"module test imports another module", Package{Path: "modules/photo", Tests: []string{"modules/asyncevent/asynceventtest"}}, []string{"modules/asyncevent/asynceventtest"}},
		{"module imports Huma", Package{Path: "modules/asyncevent/sqsqueue", Imports: []string{"github.com/danielgtaylor/huma/v2"}}, []string{"github.com/danielgtaylor/huma/v2"}},
		{"module imports net/http", Package{Path: "modules/photo/pgstore", Imports: []string{"net/http"}}, []string{"net/http"}},
		{"module imports a service", Package{Path: "modules/photo/pgstore", Imports: []string{"services/internal/server"}}, []string{"services/internal/server"}},
		{"sdk imports a service", Package{Path: "sdk/ddb", Imports: []string{"services/internal/server"}}, []string{"services/internal/server"}},
		{"sdk test imports a module", Package{Path: "sdk/auth", Tests: []string{"modules/photo"}}, []string{"modules/photo"}},
		{"service imports another service", Package{Path: "services/internal/photoapi", Imports: []string{"services/internal/asynceventapi", "services/internal/server"}}, []string{"services/internal/asynceventapi"}},
		{"service imports its own subpackage", Package{Path: "services/internal/photoapi", Imports: []string{"services/internal/photoapi/page"}}, nil},
		{"generic kit imports a module", Package{Path: "services/internal/metrics", Imports: []string{"modules/asyncevent/sqsqueue", "sdk/ddb"}}, []string{"modules/asyncevent/sqsqueue"}},
		{"generic kit test imports a module", Package{Path: "services/internal/testkit/spectest", Tests: []string{"modules/photo"}}, []string{"modules/photo"}},
		{"a module kit imports its module", Package{Path: "services/internal/asynceventbackend", Imports: []string{"modules/asyncevent/sqsqueue"}}, nil},
		{"photo's module kit imports its module", Package{Path: "services/internal/photobackend", Imports: []string{"modules/photo", "modules/photo/pgstore"}}, nil},
		{"a service imports a test kit in its tests", Package{Path: "services/internal/photoapi", Tests: []string{"services/internal/testkit/spectest"}}, nil},
		{"binaries may wire anything", Package{Path: "services/dev", Imports: []string{"services/internal/photoapi", "services/internal/asynceventapi"}}, nil},
		{"a binary links the fallback roots and zones", Package{Path: "services/photo-api", Imports: []string{"services/internal/fallback"}}, nil},
		{"the fallback kit imports them", Package{Path: "services/internal/fallback", Imports: []string{"golang.org/x/crypto/x509roots/fallback", "time/tzdata"}}, nil},
		{"a kit imports the fallback roots and zones", Package{Path: "services/internal/config", Imports: []string{"services/internal/fallback", "time/tzdata"}}, []string{"services/internal/fallback", "time/tzdata"}},
		{"a service package imports x509roots/fallback", Package{Path: "services/internal/asynceventworker", Imports: []string{"golang.org/x/crypto/x509roots/fallback"}}, []string{"golang.org/x/crypto/x509roots/fallback"}},
		{"the SDK imports the fallback roots", Package{Path: "sdk/ddb", Imports: []string{"golang.org/x/crypto/x509roots/fallback"}}, []string{"golang.org/x/crypto/x509roots/fallback"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, v := range Check([]Package{c.pkg}) {
				got = append(got, v.Import)
			}
			if !slices.Equal(got, c.refused) {
				t.Errorf("refused %q, want %q", got, c.refused)
			}
		})
	}
}

// Names show the architecture: every deployable binary services/<bin> is
// a thin main over its service package services/internal/<bin without
// dashes>, and every package under services/internal that is not a generic
// kit carries its module's name as a prefix (asyncevent…, photo…).
func TestServiceNamesShowTheirModule(t *testing.T) {
	mods, err := os.ReadDir("../../modules")
	if err != nil {
		t.Fatal(err)
	}
	var modules []string
	for _, m := range mods {
		if m.IsDir() {
			modules = append(modules, m.Name())
		}
	}
	if len(modules) < 2 {
		t.Fatalf("modules/ holds %v; want asyncevent and photo at least", modules)
	}
	internal, err := os.ReadDir("../../services/internal")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range internal {
		pkg := "services/internal/" + d.Name()
		if !d.IsDir() || (isKit(pkg) && !slices.Contains(ModuleKits, pkg)) {
			continue
		}
		if !slices.ContainsFunc(modules, func(m string) bool { return strings.HasPrefix(d.Name(), m) }) {
			t.Errorf("%s: a service package's name starts with its module's (%v)", pkg, modules)
		}
	}
	bins, err := os.ReadDir("../../services")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, b := range bins {
		if b.IsDir() && strings.Contains(b.Name(), "-") { // internal, dev and gen are not deployed services
			args = append(args, "./services/"+b.Name())
		}
	}
	if len(args) < 4 {
		t.Fatalf("found service binaries %v, want the four at least", args)
	}
	pkgs := goList(t, args...)
	if len(pkgs) != len(args) {
		t.Fatalf("go list %v: %d packages", args, len(pkgs))
	}
	for _, p := range pkgs {
		bin := strings.TrimPrefix(p.ImportPath, Module+"/services/")
		want := Module + "/services/internal/" + strings.ReplaceAll(bin, "-", "")
		if !slices.Contains(p.Imports, want) {
			t.Errorf("services/%s does not import its service package %s", bin, want)
		}
	}
}
