// Package testbin builds a main package of this repository for a test
// that runs the real binary (to kill it, or to run it as deployed but for
// its settings). It is imported by tests only.
//
// It builds with the flags the running test binary was built with (-race,
// -trimpath, -tags and CGO_ENABLED, read from its build info), so every
// package of the binary comes from the build cache that compiling the
// test filled, and only the link is new. A build with other flags (the
// deployed CGO_ENABLED=0 without -race) compiles the AWS SDK and every
// other dependency again on a machine whose cache lacks that flag set:
// 40 to 100 s under the suite's load.
package testbin

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"
)

// Build builds the main package pkg (an import path) into a temporary
// directory of t and returns the binary's path. It runs the go command in
// dir, a directory of the module whose go.mod and go.sum pkg is built with
// ("." for the test's own module; the analytics module's tests build the
// root module's binaries in "..").
func Build(t testing.TB, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), path.Base(pkg))
	args, env := []string{"build", "-o", bin}, os.Environ()
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "-race", "-trimpath":
				if s.Value == "true" {
					args = append(args, s.Key)
				}
			case "-tags":
				args = append(args, "-tags="+s.Value)
			case "CGO_ENABLED":
				env = append(env, "CGO_ENABLED="+s.Value)
			}
		}
	}
	start := time.Now()
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env, cmd.Dir = env, dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testbin: go %v: %v\n%s", cmd.Args[1:], err, out)
	}
	t.Logf("testbin: built %s in %s", pkg, time.Since(start).Round(time.Millisecond))
	return bin
}
