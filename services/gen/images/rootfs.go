package main

import (
	"archive/tar"
	"fmt"
	"path"
	"strings"
)

// The image's user: a non-root user and group, as distroless's "nonroot".
const (
	UID      = 65532
	UserName = "nonroot"
	Home     = "/home/nonroot"
)

// BinDir is where an image holds its binary.
const BinDir = "/usr/local/bin"

// passwd and group know root and the image's user; nobody can log in.
var (
	passwd = fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%[2]s:x:%[1]d:%[1]d:%[2]s:%[3]s:/sbin/nologin\n", UID, UserName, Home)
	group  = fmt.Sprintf("root:x:0:\n%[2]s:x:%[1]d:\n", UID, UserName)
)

// baseEntries are the files every image has besides its binary: /etc/passwd
// and /etc/group, the user's home and /tmp. No CA bundle and no time
// zones: the binaries carry their own (services/internal/fallback).
func baseEntries() []entry {
	return []entry{
		dir("etc", 0o755), file("etc/passwd", 0o644, []byte(passwd)), file("etc/group", 0o644, []byte(group)),
		dir("home", 0o755), {Name: rel(Home), Type: tar.TypeDir, Mode: 0o700, UID: UID, GID: UID},
		{Name: "tmp", Type: tar.TypeDir, Mode: 0o1777},
	}
}

// binaryEntries put the binary bin at /usr/local/bin/<name>.
func binaryEntries(name string, bin []byte) []entry {
	return []entry{dir("usr", 0o755), dir("usr/local", 0o755), dir(rel(BinDir), 0o755), file(rel(Entrypoint(name)), 0o755, bin)}
}

// Entrypoint is the path of binary name in its image.
func Entrypoint(name string) string { return path.Join(BinDir, name) }

// rel is an image path without its leading slash, as layers name it.
func rel(p string) string { return strings.TrimPrefix(p, "/") }
