package filesink

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Object is one object written under a sink's folder: its path relative to
// the folder (events/dt=…/hour=…/<name>) and its lines (events).
type Object struct {
	Path  string
	Lines [][]byte
}

// Read returns every object under dir/events, in path order: what a
// reader of the bucket sees. The spool (the buffer) is not read.
func Read(dir string) ([]Object, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "events", "dt=*", "hour=*", "*"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Object
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("filesink: %w", err)
		}
		rel, _ := filepath.Rel(dir, p)
		o := Object{Path: filepath.ToSlash(rel)}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			o.Lines = append(o.Lines, bytes.Clone(sc.Bytes()))
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("filesink: %s: %w", rel, err)
		}
		out = append(out, o)
	}
	return out, nil
}
