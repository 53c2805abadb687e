package main

import (
	"archive/tar"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Every image's base is /etc/passwd and /etc/group naming its user, the
// user's home and /tmp: no file of the build machine (no CA bundle, no
// time zones), so any machine builds the same layer.
func TestBaseEntries(t *testing.T) {
	var got []string
	files := map[string]entry{}
	for _, e := range baseEntries() {
		kind := map[byte]string{tar.TypeDir: "dir", tar.TypeReg: "file"}[e.Type]
		got = append(got, fmt.Sprintf("%s %s %o %d:%d", e.Name, kind, e.Mode, e.UID, e.GID))
		files[e.Name] = e
	}
	slices.Sort(got)
	want := []string{
		"etc dir 755 0:0", "etc/group file 644 0:0", "etc/passwd file 644 0:0",
		"home dir 755 0:0", "home/nonroot dir 700 65532:65532", "tmp dir 1777 0:0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("base entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if pw := string(files["etc/passwd"].Data); !strings.Contains(pw, "\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n") {
		t.Errorf("/etc/passwd names no nonroot 65532:\n%s", pw)
	}
	if gr := string(files["etc/group"].Data); !strings.Contains(gr, "\nnonroot:x:65532:\n") {
		t.Errorf("/etc/group names no nonroot 65532:\n%s", gr)
	}
}
