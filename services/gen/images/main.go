// Command images builds one OCI image per product binary without Docker
// or a base image, on any machine (it takes no file from it): each starts
// empty and holds the static binary (CGO_ENABLED=0), which carries its own
// CA roots and time zones (services/internal/fallback), and /etc/passwd
// and /etc/group naming the user it runs as, nonroot (65532). Each
// binary's image index (linux/amd64 and linux/arm64 by default) is written
// as an OCI layout to <out>/<binary>, ready for `crane push` or `skopeo
// copy`; the digests are printed. `make images` runs it from the
// repository root.
//
// The binaries are those the deployment runs (the task definitions of
// deploy/aws/pacer.template.json), with the ports it maps. The images are
// reproducible: every timestamp is SOURCE_DATE_EPOCH or the commit's time
// and layers list their files sorted, so the same checkout and Go
// toolchain build the same digests.
//
//	go run ./services/gen/images [-out .cache/images] [-platforms linux/amd64,linux/arm64] [-binaries asyncevent-api,…]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	root := flag.String("root", ".", "repository root: reads "+TemplateFile+" and builds ./services/<binary>")
	out := flag.String("out", filepath.Join(".cache", "images"), "where each binary's OCI layout is written (<out>/<binary>, replaced)")
	platforms := flag.String("platforms", "linux/amd64,linux/arm64", "the platforms of every image index, comma-separated")
	only := flag.String("binaries", "", "build only these binaries, comma-separated (default: every deployed binary)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *root, *out, *platforms, *only, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

// run builds the images and prints each one's digests to stdout; progress
// goes to stderr.
func run(ctx context.Context, root, out, platforms, only string, stdout, stderr io.Writer) error {
	start := time.Now()
	bins, err := Deployed(filepath.Join(root, TemplateFile))
	if err != nil {
		return err
	}
	if bins, err = selectBinaries(bins, only); err != nil {
		return err
	}
	ps, err := parsePlatforms(platforms)
	if err != nil {
		return err
	}
	src, err := SourceOf(ctx, root)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "source %s (%s), timestamps %s\n", src.Version, src.Revision, src.Time.Format(time.RFC3339))
	results, err := Build(ctx, Config{Root: root, Out: out, Binaries: bins, Platforms: ps, Source: src, Progress: stderr})
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(stdout, "%s %s (index, OCI layout %s)\n", r.Binary, r.Index, r.Layout)
		for _, im := range r.Images {
			fmt.Fprintf(stdout, "  %-12s %s\n", im.Platform.String(), im.Digest)
		}
	}
	fmt.Fprintf(stderr, "built %d images in %s\n", len(results)*len(ps), time.Since(start).Round(100*time.Millisecond))
	return nil
}

// selectBinaries keeps the binaries only names (all if only is empty).
func selectBinaries(bins []Binary, only string) ([]Binary, error) {
	if only == "" {
		return bins, nil
	}
	var out []Binary
	for _, n := range strings.Split(only, ",") {
		i := slices.IndexFunc(bins, func(b Binary) bool { return b.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("-binaries: %q is not a deployed binary (%s)", n, TemplateFile)
		}
		out = append(out, bins[i])
	}
	return out, nil
}

// parsePlatforms reads "linux/amd64,linux/arm64".
func parsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, f := range strings.Split(s, ",") {
		goos, arch, ok := strings.Cut(f, "/")
		if !ok || goos == "" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("-platforms: %q is not os/arch (linux/arm64)", f)
		}
		if slices.ContainsFunc(out, func(p v1.Platform) bool { return p.OS == goos && p.Architecture == arch }) {
			return nil, fmt.Errorf("-platforms: %s twice", f)
		}
		out = append(out, v1.Platform{OS: goos, Architecture: arch})
	}
	return out, nil
}
