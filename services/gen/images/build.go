package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Config says what Build builds, and where.
type Config struct {
	Root      string // the repository: binary b is the package Root/services/<b>
	Out       string // binary b's OCI layout is written to Out/<b>, replacing any there
	Binaries  []Binary
	Platforms []v1.Platform
	Source    Source
	Progress  io.Writer // progress lines ("building asyncevent-api linux/arm64 …"); nil: none
}

// Result is one binary's image: its OCI layout, the index's digest (what
// a deployment names) and each platform's image digest.
type Result struct {
	Binary string
	Layout string
	Index  v1.Hash
	Images []PlatformImage
}

// PlatformImage is one platform's image in an index.
type PlatformImage struct {
	Platform v1.Platform
	Digest   v1.Hash
}

// Build compiles every binary for every platform and writes each binary's
// image index, one image per platform, as an OCI layout under cfg.Out.
// The same sources and Go toolchain build the same digests, on any machine.
func Build(ctx context.Context, cfg Config) ([]Result, error) {
	if len(cfg.Binaries) == 0 || len(cfg.Platforms) == 0 {
		return nil, fmt.Errorf("images: no binary or no platform to build")
	}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", args...)
		}
	}
	base, err := layer(baseEntries(), cfg.Source.Time)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "pacer-images-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	names := make([]string, len(cfg.Binaries))
	for i, b := range cfg.Binaries {
		names[i] = b.Name
	}
	for _, p := range cfg.Platforms {
		progress("compiling %s for %s …", strings.Join(names, ", "), p)
		if err := compile(ctx, cfg.Root, filepath.Join(tmp, platformDir(p)), p, names); err != nil {
			return nil, err
		}
	}
	out := make([]Result, len(cfg.Binaries))
	for i, b := range cfg.Binaries {
		imgs := make([]v1.Image, len(cfg.Platforms))
		for j, p := range cfg.Platforms {
			progress("building %s %s …", b.Name, p)
			if imgs[j], err = platformImage(filepath.Join(tmp, platformDir(p), b.Name), p, b, base, cfg.Source); err != nil {
				return nil, fmt.Errorf("images: %s %s: %w", b.Name, p, err)
			}
		}
		path := filepath.Join(cfg.Out, b.Name)
		if out[i], err = write(path, index(imgs, cfg.Platforms)); err != nil {
			return nil, fmt.Errorf("images: %s: %w", b.Name, err)
		}
		out[i].Binary = b.Name
	}
	return out, nil
}

// platformDir is the folder of p's compiled binaries.
func platformDir(p v1.Platform) string { return p.OS + "-" + p.Architecture }

// platformImage is binary b's image for p, from its compiled file.
func platformImage(compiled string, p v1.Platform, b Binary, base v1.Layer, src Source) (v1.Image, error) {
	data, err := os.ReadFile(compiled)
	if err != nil {
		return nil, err
	}
	bin, err := layer(binaryEntries(b.Name, data), src.Time)
	if err != nil {
		return nil, err
	}
	return image(p, b, base, bin, src)
}

// write replaces the OCI layout at path with one holding idx (its
// index.json lists idx, so `crane push path` and `skopeo copy --all
// oci:path` push the whole index) and returns the digests.
func write(path string, idx v1.ImageIndex) (Result, error) {
	if err := clearLayout(path); err != nil {
		return Result{}, err
	}
	lp, err := layout.Write(path, empty.Index)
	if err != nil {
		return Result{}, err
	}
	if err := lp.AppendIndex(idx); err != nil {
		return Result{}, err
	}
	r := Result{Layout: path}
	if r.Index, err = idx.Digest(); err != nil {
		return Result{}, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return Result{}, err
	}
	for _, d := range m.Manifests {
		r.Images = append(r.Images, PlatformImage{Platform: *d.Platform, Digest: d.Digest})
	}
	return r, nil
}

// clearLayout removes the OCI layout at path, refusing to remove a folder
// that is not one.
func clearLayout(path string) error {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(path, "oci-layout")); err != nil {
		return fmt.Errorf("%s exists and is not an OCI layout: not replacing it", path)
	}
	return os.RemoveAll(path)
}
