package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// openStandinLog opens the file the stand-ins write to ("-" is stderr, with
// each line prefixed "standin| ").
func openStandinLog(path string) (io.Writer, func(), error) {
	if path == "-" {
		return &prefixWriter{w: os.Stderr, prefix: []byte("standin| ")}, func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	return f, func() { once.Do(func() { _ = f.Close() }) }, nil
}

// prefixWriter writes each line to w with a prefix.
type prefixWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  []byte
	midLine bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !p.midLine {
			out.Write(p.prefix)
		}
		out.Write(line)
		p.midLine = line[len(line)-1] != '\n'
	}
	if _, err := p.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(b), nil
}
