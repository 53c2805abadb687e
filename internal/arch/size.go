package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxMethods is the most methods (exported and unexported) one type of a
// domain root may have: a role a reader holds in their head. A type that
// needs more is two roles (docs/architecture.md, "Services by role").
const MaxMethods = 20

// Shape is what the size rules need to know of one package's non-test
// source: each type's method count, and each interface it declares in
// port.go with the number of references to it elsewhere in the package.
type Shape struct {
	Path    string
	Methods map[string]int // receiver type → methods
	Ports   map[string]int // port interface → references outside its declaration
}

// ReadShape parses the non-test Go files of the package in dir.
func ReadShape(path, dir string) (Shape, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Shape{}, err
	}
	var files []*ast.File
	var port *ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return Shape{}, err
		}
		files = append(files, f)
		if name == "port.go" {
			port = f
		}
	}
	return shapeOf(path, files, port), nil
}

// shapeOf counts methods per receiver type over files, and references to
// port's interfaces.
func shapeOf(path string, files []*ast.File, port *ast.File) Shape {
	s := Shape{Path: path, Methods: map[string]int{}, Ports: map[string]int{}}
	decls := map[*ast.Ident]bool{} // the ports' own names
	if port != nil {
		for _, d := range port.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, sp := range g.Specs {
				if ts, ok := sp.(*ast.TypeSpec); ok {
					if _, ok := ts.Type.(*ast.InterfaceType); ok {
						s.Ports[ts.Name.Name] = 0
						decls[ts.Name] = true
					}
				}
			}
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 {
				if name := receiverName(fd.Recv.List[0].Type); name != "" {
					s.Methods[name]++
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !decls[id] {
				if _, port := s.Ports[id.Name]; port {
					s.Ports[id.Name]++
				}
			}
			return true
		})
	}
	return s
}

// receiverName is the type name of a method's receiver (T, *T, T[P]).
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// CheckShape returns what in a domain root's shape breaks the size rules:
// a type with more than MaxMethods methods, and a port interface nothing
// in the package consumes (a port on paper only: a role's config field,
// another port or a function must name it).
func CheckShape(s Shape) []string {
	var out []string
	for _, typ := range slices.Sorted(maps.Keys(s.Methods)) {
		if n := s.Methods[typ]; n > MaxMethods {
			out = append(out, fmt.Sprintf("%s: type %s has %d methods, more than %d: split it by role", s.Path, typ, n, MaxMethods))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(s.Ports)) {
		if s.Ports[p] == 0 {
			out = append(out, fmt.Sprintf("%s: port %s is consumed by nothing in the package: a role's config takes it, or it goes", s.Path, p))
		}
	}
	return out
}

// DomainRoots lists the domain roots (modules/<m>) under root, the
// repository's top.
func DomainRoots(root string) ([]string, error) {
	var out []string
	entries, err := os.ReadDir(filepath.Join(root, "modules"))
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, "modules", e.Name(), "doc.go")); e.IsDir() && err == nil {
			out = append(out, "modules/"+e.Name())
		}
	}
	return out, nil
}
