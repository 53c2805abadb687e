package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The time zones are copied with the aliases inside the zoneinfo folder;
// a link out of it (the machine's localtime) is left out.
func TestZoneEntriesKeepOnlyLinksInside(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "Etc"), 0o755))
	must(os.WriteFile(filepath.Join(src, "Etc", "UTC"), []byte("TZif"), 0o600))
	must(os.Symlink("Etc/UTC", filepath.Join(src, "UTC")))
	must(os.Symlink("../Etc/UTC", filepath.Join(src, "Etc", "Zulu")))
	must(os.Symlink("/etc/localtime", filepath.Join(src, "localtime")))
	must(os.Symlink("../../../etc/passwd", filepath.Join(src, "escape")))
	got, err := zoneEntries(src)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
		if e.Type == tar.TypeReg && e.Mode != 0o644 {
			t.Errorf("%s: mode %o, want 644", e.Name, e.Mode)
		}
	}
	want := []string{"usr/share/zoneinfo", "usr/share/zoneinfo/Etc", "usr/share/zoneinfo/Etc/UTC", "usr/share/zoneinfo/Etc/Zulu", "usr/share/zoneinfo/UTC"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("entries %v, want %v", names, want)
	}
	if _, err := zoneEntries(filepath.Join(src, "missing")); err == nil {
		t.Error("a missing zoneinfo folder: no error")
	}
}
