package main

import (
	"archive/tar"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The image's user: a non-root user and group, as distroless's "nonroot".
const (
	UID      = 65532
	UserName = "nonroot"
	Home     = "/home/nonroot"
)

// Paths in the image.
const (
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
	ZoneInfo = "/usr/share/zoneinfo"
	BinDir   = "/usr/local/bin"
)

// Host names the files of the machine an image takes: Debian's CA bundle
// (package ca-certificates) and time zone database (package tzdata).
type Host struct {
	CABundle string // a PEM bundle, e.g. /etc/ssl/certs/ca-certificates.crt
	ZoneInfo string // a zoneinfo folder, e.g. /usr/share/zoneinfo
}

// DefaultHost is where Debian installs them, the same paths as in the
// image.
var DefaultHost = Host{CABundle: CABundle, ZoneInfo: ZoneInfo}

// passwd and group know root and the image's user; nobody can log in.
var (
	passwd = fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%[2]s:x:%[1]d:%[1]d:%[2]s:%[3]s:/sbin/nologin\n", UID, UserName, Home)
	group  = fmt.Sprintf("root:x:0:\n%[2]s:x:%[1]d:\n", UID, UserName)
)

// baseEntries are the files every image has besides its binary: /etc/passwd
// and /etc/group, the user's home, /tmp, the CA bundle and the time zones.
func baseEntries(h Host) ([]entry, error) {
	ca, err := os.ReadFile(h.CABundle)
	if err != nil {
		return nil, fmt.Errorf("images: the CA bundle (install Debian's ca-certificates): %w", err)
	}
	out := []entry{
		dir("etc", 0o755), file("etc/passwd", 0o644, []byte(passwd)), file("etc/group", 0o644, []byte(group)),
		dir("etc/ssl", 0o755), dir("etc/ssl/certs", 0o755), file(rel(CABundle), 0o644, ca),
		dir("home", 0o755), {Name: rel(Home), Type: tar.TypeDir, Mode: 0o700, UID: UID, GID: UID},
		{Name: "tmp", Type: tar.TypeDir, Mode: 0o1777},
		dir("usr", 0o755), dir("usr/share", 0o755),
	}
	zones, err := zoneEntries(h.ZoneInfo)
	if err != nil {
		return nil, fmt.Errorf("images: the time zones (install Debian's tzdata): %w", err)
	}
	return append(out, zones...), nil
}

// zoneEntries copies the zoneinfo folder src to /usr/share/zoneinfo: its
// folders, files and the symbolic links that stay inside it (aliases such
// as UTC → Etc/UTC); a link out of it (localtime → /etc/localtime, the
// machine's own zone) is left out.
func zoneEntries(src string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := path.Join(rel(ZoneInfo), filepath.ToSlash(r))
		switch {
		case d.IsDir():
			out = append(out, dir(name, 0o755))
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, file(name, 0o644, b))
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if !path.IsAbs(target) && inside(path.Join(path.Dir(name), target), rel(ZoneInfo)) {
				out = append(out, symlink(name, target))
			}
		}
		return nil
	})
	if err == nil && len(out) < 2 {
		err = fmt.Errorf("%s is empty", src)
	}
	return out, err
}

// binaryEntries put the binary bin at /usr/local/bin/<name>.
func binaryEntries(name string, bin []byte) []entry {
	return []entry{dir("usr", 0o755), dir("usr/local", 0o755), dir(rel(BinDir), 0o755), file(rel(Entrypoint(name)), 0o755, bin)}
}

// Entrypoint is the path of binary name in its image.
func Entrypoint(name string) string { return path.Join(BinDir, name) }

// rel is an image path without its leading slash, as layers name it.
func rel(p string) string { return strings.TrimPrefix(p, "/") }

// inside reports whether the clean path p is root or under it.
func inside(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
