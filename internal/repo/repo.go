// Package repo finds files of the Pacer repository from tests and tools:
// the folder holding Pacer's go.mod, searched upwards from the working
// directory (a test runs in its package's folder). It needs no source path
// compiled into the binary, so tests built with -trimpath (as make test
// builds them, so that a clone at a new path reuses the build cache) still
// find the docs they check.
//
//	path, err := repo.File("docs", "metrics.md")
package repo

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Module is the module path of Pacer's go.mod.
const Module = "github.com/pacerhq/pacer"

// Root returns the repository's root: the nearest folder at or above the
// working directory whose go.mod declares Module.
func Root() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if declares(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("repo: no go.mod of %s at or above %s", Module, wd)
		}
	}
}

// File returns the path of a file given relative to the repository's root.
func File(elem ...string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{root}, elem...)...), nil
}

// declares reports whether the go.mod at path declares Module.
func declares(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module")) == Module
		}
	}
	return false
}

// ReadFile reads a file given relative to the repository's root.
func ReadFile(elem ...string) ([]byte, error) {
	path, err := File(elem...)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
