package main

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// A layer's bytes depend on its entries only: not on their order, and
// every header carries the one timestamp and numeric owners.
func TestLayerIsReproducible(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	entries := []entry{
		dir("etc", 0o755), file("etc/passwd", 0o644, []byte(passwd)), {Name: "etc/alias", Type: tar.TypeSymlink, Mode: 0o777, Link: "passwd"},
		{Name: "home/nonroot", Type: tar.TypeDir, Mode: 0o700, UID: UID, GID: UID}, dir("home", 0o755),
	}
	reversed := make([]entry, len(entries))
	for i, e := range entries {
		reversed[len(entries)-1-i] = e
	}
	a, err := layer(entries, mtime)
	if err != nil {
		t.Fatal(err)
	}
	b, err := layer(reversed, mtime.Add(999*time.Millisecond)) // the same second
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Errorf("the same entries in another order: digest %s, then %s", da, db)
	}
	later, err := layer(entries, mtime.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if dl, _ := later.Digest(); dl == da {
		t.Errorf("another timestamp, the same digest %s: the timestamp is not in the layer", dl)
	}

	tb, err := tarBytes(reversed, mtime)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(bytes.NewReader(tb))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(mtime) || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: mtime %s, owner names %q %q; want %s and none", h.Name, h.ModTime, h.Uname, h.Gname, mtime)
		}
	}
	if got, want := strings.Join(names, " "), "etc/ etc/alias etc/passwd home/ home/nonroot/"; got != want {
		t.Errorf("entries %s, want %s", got, want)
	}
}

// Entries that would write outside the image, or twice to one path, are
// refused.
func TestLayerRefusesBadEntries(t *testing.T) {
	for name, entries := range map[string][]entry{
		"absolute":  {file("/etc/passwd", 0o644, nil)},
		"escaping":  {file("../etc/passwd", 0o644, nil)},
		"root":      {dir(".", 0o755)},
		"twice":     {file("etc/passwd", 0o644, nil), file("etc//passwd", 0o644, nil)},
		"dir twice": {dir("etc", 0o755), dir("etc/", 0o700)},
	} {
		if _, err := tarBytes(entries, time.Unix(0, 0)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
