package arch

import (
	"fmt"
	"slices"
	"strings"
)

// Module is the Go module path every rule is relative to.
const Module = "github.com/pacerhq/pacer"

// Kits are the services/internal packages that any service may import: the
// shared building blocks, as opposed to one service's own package. Every
// kit but a module's (ModuleKits) is generic: it imports no module.
var Kits = []string{
	"services/internal/server",            // the Huma kit: API construction, auth adapters, problems
	"services/internal/config",            // settings from flags and env, Main
	"services/internal/metrics",           // Prometheus registry, the shared collectors, /metrics
	"services/internal/ops",               // a background process's /metrics, /healthz, /readyz
	"services/internal/ratelimit",         // per-user and per-address token buckets, the client address
	"services/internal/humancheck",        // a challenge provider's siteverify (Turnstile, hCaptcha, reCAPTCHA)
	"services/internal/fallback",          // the CA roots and time zones a deployed binary carries (binaries only import it)
	"services/internal/testkit",           // tests: spectest, browsertest, smuggletest, proctest, iamtest
	"services/internal/asynceventbackend", // AsyncEvent's AWS wiring and metrics, shared by its services
	"services/internal/photobackend",      // PhotoService's wiring: its pool and table, and the roles over them
}

// ModuleKits are the kits that belong to one module's services, and so may
// import that module.
var ModuleKits = []string{"services/internal/asynceventbackend", "services/internal/photobackend"}

// Package is what a rule needs to know of one package: its path relative to
// Module ("sdk/ddb"), and its imports, also relative where they are inside
// Module ("" prefix stripped) and verbatim otherwise.
type Package struct {
	Path    string
	Imports []string // non-test imports
	Tests   []string // imports of _test.go files (in-package and external)
}

// Violation is one import that breaks a rule.
type Violation struct {
	Rule, Pkg, Import string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s: %s", v.Pkg, v.Import, v.Rule)
}

// rule is one import rule: for a package it applies to, forbidden says why
// an import is refused ("" if it is fine). tests says whether test imports
// are held to it too.
type rule struct {
	applies   func(pkg string) bool
	forbidden func(pkg, imp string) string
	tests     bool
}

// Rules are the import rules, in the order they are reported.
var rules = []rule{
	{ // domain roots: stdlib + ulid
		applies: isDomainRoot,
		forbidden: func(_, imp string) string {
			if isStd(imp) || imp == "github.com/oklog/ulid/v2" {
				return ""
			}
			return "a domain root imports the standard library and github.com/oklog/ulid/v2 only (put vendor code in an adapter package)"
		},
	},
	{ // modules: no other module, no service, no HTTP
		applies: func(pkg string) bool { return strings.HasPrefix(pkg, "modules/") },
		forbidden: func(pkg, imp string) string {
			switch {
			case strings.HasPrefix(imp, "modules/") && moduleOf(imp) != moduleOf(pkg):
				return "modules never import each other"
			case strings.HasPrefix(imp, "services/"):
				return "imports point services → modules → sdk"
			case strings.HasPrefix(imp, "github.com/danielgtaylor/huma"), imp == "net/http":
				return "modules know nothing of HTTP (Huma, net/http): that is the services' job"
			}
			return ""
		},
		tests: true,
	},
	{ // sdk: no module, no service
		applies: func(pkg string) bool { return pkg == "sdk" || strings.HasPrefix(pkg, "sdk/") },
		forbidden: func(_, imp string) string {
			if strings.HasPrefix(imp, "modules/") || strings.HasPrefix(imp, "services/") || strings.HasPrefix(imp, "examples/") {
				return "the SDK imports no module or service: imports point services → modules → sdk"
			}
			return ""
		},
		tests: true,
	},
	{ // generic kits: no module
		applies: func(pkg string) bool { return isKit(pkg) && !slices.Contains(ModuleKits, serviceOf(pkg)) },
		forbidden: func(_, imp string) string {
			if strings.HasPrefix(imp, "modules/") {
				return "a generic kit imports no module: a module's service code lives in its services or its module kit (arch.ModuleKits)"
			}
			return ""
		},
		tests: true,
	},
	{ // the fallback roots and zones: binaries only
		applies: func(pkg string) bool { return !isBinary(pkg) && pkg != Fallback },
		forbidden: func(_, imp string) string {
			if imp == Fallback || imp == "golang.org/x/crypto/x509roots/fallback" || imp == "time/tzdata" {
				return "only a binary (services/<bin>) links the fallback CA roots and time zones, through " + Fallback + ": a library that did would set them for every program linking it"
			}
			return ""
		},
	},
	{ // services/internal/<svc>: only kits
		applies: func(pkg string) bool { return strings.HasPrefix(pkg, "services/internal/") },
		forbidden: func(pkg, imp string) string {
			if !strings.HasPrefix(imp, "services/internal/") || serviceOf(imp) == serviceOf(pkg) || isKit(imp) {
				return ""
			}
			return "a service's package imports no other service's package, only the shared kits (arch.Kits)"
		},
		tests: true,
	},
}

// Check returns every import of pkgs that breaks a rule.
func Check(pkgs []Package) []Violation {
	var out []Violation
	for _, p := range pkgs {
		for _, r := range rules {
			if !r.applies(p.Path) {
				continue
			}
			imps := p.Imports
			if r.tests {
				imps = append(append([]string(nil), p.Imports...), p.Tests...)
			}
			for _, imp := range imps {
				if why := r.forbidden(p.Path, imp); why != "" {
					out = append(out, Violation{Rule: why, Pkg: p.Path, Import: imp})
				}
			}
		}
	}
	return out
}

// Fallback is the package that links the CA roots and time zones every
// deployed binary carries (time/tzdata, golang.org/x/crypto/x509roots/fallback).
const Fallback = "services/internal/fallback"

// isBinary reports whether pkg is a binary's main package, services/<bin>.
func isBinary(pkg string) bool {
	rest, ok := strings.CutPrefix(pkg, "services/")
	return ok && rest != "" && rest != "internal" && !strings.Contains(rest, "/")
}

// isDomainRoot reports whether pkg is modules/<m> itself.
func isDomainRoot(pkg string) bool {
	rest, ok := strings.CutPrefix(pkg, "modules/")
	return ok && rest != "" && !strings.Contains(rest, "/")
}

// moduleOf is "modules/<m>" for any package under it.
func moduleOf(pkg string) string { return firstN(pkg, 2) }

// serviceOf is "services/internal/<svc>" for any package under it.
func serviceOf(pkg string) string { return firstN(pkg, 3) }

func isKit(pkg string) bool {
	for _, k := range Kits {
		if serviceOf(pkg) == k {
			return true
		}
	}
	return false
}

func firstN(path string, n int) string {
	parts := strings.SplitN(path, "/", n+1)
	if len(parts) > n {
		parts = parts[:n]
	}
	return strings.Join(parts, "/")
}

// isStd reports whether an import path is the standard library's (its
// first element has no dot) and not one of this module's relative paths.
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	if strings.Contains(first, ".") {
		return false
	}
	switch first {
	case "sdk", "modules", "services", "examples", "migrations", "internal", "bench", "tools", "deploy":
		return false
	}
	return true
}
