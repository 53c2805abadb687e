package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestDomainRootsAreSmall holds every domain root to the size rules: no
// type over MaxMethods methods, no port consumed by nothing.
func TestDomainRootsAreSmall(t *testing.T) {
	roots, err := DomainRoots("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(roots) < 2 {
		t.Fatalf("found domain roots %v; expected modules/asyncevent and modules/photo at least", roots)
	}
	for _, r := range roots {
		s, err := ReadShape(r, "../../"+r)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Methods) == 0 || len(s.Ports) == 0 {
			t.Fatalf("%s: read %d types with methods and %d ports: the reader is broken", r, len(s.Methods), len(s.Ports))
		}
		for _, v := range CheckShape(s) {
			t.Error(v)
		}
	}
}

// TestShapeRulesCatchViolations feeds the size rules made-up packages: a
// type with MaxMethods+1 methods and a port nothing names must be refused,
// and one with MaxMethods methods and a consumed port must pass.
func TestShapeRulesCatchViolations(t *testing.T) {
	pkg := func(methods int, consumed bool) Shape {
		var src strings.Builder
		src.WriteString("package m\n\ntype Big struct{}\n")
		for i := range methods {
			fmt.Fprintf(&src, "func (b *Big) m%d() {}\n", i)
		}
		if consumed {
			src.WriteString("type BigConfig struct{ Store Store }\n")
		}
		port := "package m\n\n// Store is a port.\ntype Store interface{ Get() error }\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "big.go", src.String(), 0)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parser.ParseFile(fset, "port.go", port, 0)
		if err != nil {
			t.Fatal(err)
		}
		return shapeOf("modules/m", []*ast.File{f, p}, p)
	}
	if v := CheckShape(pkg(MaxMethods, true)); len(v) != 0 {
		t.Errorf("a type with %d methods and a consumed port: refused: %v", MaxMethods, v)
	}
	if v := CheckShape(pkg(MaxMethods+1, true)); len(v) != 1 || !strings.Contains(v[0], "type Big has 21 methods") {
		t.Errorf("a type with %d methods: got %v, want it refused", MaxMethods+1, v)
	}
	if v := CheckShape(pkg(1, false)); len(v) != 1 || !strings.Contains(v[0], "port Store is consumed by nothing") {
		t.Errorf("a port nothing names: got %v, want it refused", v)
	}
}
