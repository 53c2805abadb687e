package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// GoFlags are the go build flags of every binary: static (CGO_ENABLED=0
// is set in the environment), no checkout path or VCS stamp in the binary
// (the revision is an image label instead), no symbol table or DWARF
// (smaller pulls; stack traces and profiles still name functions).
var GoFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// compile builds the named binaries (packages ./services/<name> under
// root) for platform p into dir, one go build for all of them, so the
// packages they share compile once and the Go build cache serves every
// later build.
func compile(ctx context.Context, root, dir string, p v1.Platform, names []string) error {
	args := append([]string{"build"}, GoFlags...)
	args = append(args, "-o", dir+string(os.PathSeparator))
	for _, n := range names {
		args = append(args, "./services/"+n)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+p.OS, "GOARCH="+p.Architecture, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s (GOOS=%s GOARCH=%s): %w\n%s", strings.Join(args, " "), p.OS, p.Architecture, err, stderr.String())
	}
	return nil
}
