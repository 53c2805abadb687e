package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is one folder, file or symbolic link of a layer.
type entry struct {
	// Name is its path in the image, relative ("etc/passwd"); a folder's
	// may end in "/".
	Name string
	// Type is tar.TypeDir, tar.TypeReg or tar.TypeSymlink.
	Type     byte
	Mode     int64
	UID, GID int
	Data     []byte // a file's contents
	Link     string // a symbolic link's target
}

// dir and file are entries owned by root.
func dir(name string, mode int64) entry { return entry{Name: name, Type: tar.TypeDir, Mode: mode} }
func file(name string, mode int64, data []byte) entry {
	return entry{Name: name, Type: tar.TypeReg, Mode: mode, Data: data}
}

// layer is a gzip-compressed OCI layer of entries, the same bytes for the
// same entries in any order: the tar lists them sorted by name, every
// modification time is mtime, owners are numeric only (no user or group
// names), and gzip's header carries no name or time.
func layer(entries []entry, mtime time.Time) (v1.Layer, error) {
	tb, err := tarBytes(entries, mtime)
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tb); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return openLayer(gz.Bytes())
}

// openLayer is the layer whose compressed bytes are gz.
func openLayer(gz []byte) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// tarBytes is the tar archive of entries, sorted by name (a folder before
// what it holds); two entries with one name are an error.
func tarBytes(entries []entry, mtime time.Time) ([]byte, error) {
	sorted := make([]entry, len(entries))
	for i, e := range entries {
		e.Name = strings.TrimSuffix(path.Clean(e.Name), "/")
		if e.Type == tar.TypeDir {
			e.Name += "/"
		}
		if path.IsAbs(e.Name) || strings.HasPrefix(e.Name, "../") || e.Name == "./" || e.Name == "." {
			return nil, fmt.Errorf("images: layer entry %q is not a path inside the image", entries[i].Name)
		}
		sorted[i] = e
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, e := range sorted {
		if i > 0 && strings.TrimSuffix(sorted[i-1].Name, "/") == strings.TrimSuffix(e.Name, "/") {
			return nil, fmt.Errorf("images: %s is twice in one layer", e.Name)
		}
		h := &tar.Header{Typeflag: e.Type, Name: e.Name, Linkname: e.Link, Mode: e.Mode, Uid: e.UID, Gid: e.GID,
			ModTime: mtime.UTC().Truncate(time.Second)}
		if e.Type == tar.TypeReg {
			h.Size = int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("images: %s: %w", e.Name, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
