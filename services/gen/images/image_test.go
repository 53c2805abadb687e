package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// testBinary is the binary the image tests build: the worker, whose ops
// port answers /healthz and /readyz (DynamoDB and SQS reachable).
const testBinary = "asyncevent-worker"

// TestImages builds the worker's image index for linux/amd64 and
// linux/arm64 twice with the images command (built without the race
// detector: its tar and gzip under -race took a minute), and checks that both builds have the same digests,
// that each platform's image is what the deployment expects (its
// architecture, entrypoint, user, port, labels and a static binary for its
// CPU that links its own CA roots), and that the host's platform's image runs isolated: its files
// only, its entrypoint as user 65532, healthy and ready on loopback.
func TestImages(t *testing.T) {
	ctx := context.Background()
	root := repoRoot(t)
	bins, err := Deployed(filepath.Join(root, TemplateFile))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(bins, func(b Binary) bool { return b.Name == testBinary })
	if i < 0 {
		t.Fatalf("the template deploys no %s: %v", testBinary, bins)
	}
	src, err := SourceOf(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	platforms, err := parsePlatforms("linux/amd64,linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	tool := buildTool(t, root, out)
	first := runTool(t, tool, root, filepath.Join(out, "first"))
	second := runTool(t, tool, root, filepath.Join(out, "second"))
	t.Logf("%s: %s", testBinary, first)
	if first.digests != second.digests {
		t.Errorf("two builds of the same source: %s, then %s", first, second)
	}
	if n := strings.Count(first.digests, "sha256:"); n != 1+len(platforms) {
		t.Fatalf("the build printed %d digests, want the index's and one per platform:\n%s", n, first.digests)
	}

	idx := readLayout(t, filepath.Join(out, "first", testBinary), first.index)
	for _, p := range platforms {
		t.Run(p.OS+"-"+p.Architecture, func(t *testing.T) {
			img := platformOf(t, idx, p)
			files := checkImage(t, img, p, bins[i], src)
			if p.Architecture == runtime.GOARCH {
				runIsolated(t, img, files)
			}
		})
	}
}

// readLayout reads the OCI layout at path: its index.json must list the
// one image index whose digest Build reported.
func readLayout(t *testing.T, path string, want v1.Hash) v1.ImageIndex {
	t.Helper()
	lp, err := layout.FromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != want || m.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("%s/index.json lists %+v; want the image index %s only", path, m.Manifests, want)
	}
	idx, err := top.ImageIndex(want)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// platformOf is idx's image for p; idx must list each platform once.
func platformOf(t *testing.T, idx v1.ImageIndex, p v1.Platform) v1.Image {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var found []v1.Hash
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Equals(p) && d.MediaType == types.OCIManifestSchema1 {
			found = append(found, d.Digest)
		}
	}
	if len(found) != 1 {
		t.Fatalf("the index lists %d OCI images for %s: %+v", len(found), p, m.Manifests)
	}
	img, err := idx.Image(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// imageFile is one entry of an image's file system.
type imageFile struct {
	hdr  *tar.Header
	data []byte
}

// checkImage checks img's configuration and files for platform p and
// returns its files by path.
func checkImage(t *testing.T, img v1.Image, p v1.Platform, bin Binary, src Source) map[string]imageFile {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	for _, check := range []struct {
		what      string
		got, want any
	}{
		{"os", cf.OS, p.OS},
		{"architecture", cf.Architecture, p.Architecture},
		{"entrypoint", c.Entrypoint, []string{"/usr/local/bin/" + bin.Name}},
		{"cmd", c.Cmd, []string(nil)},
		{"user", c.User, "65532:65532"},
		{"exposed ports", slices.Sorted(maps.Keys(c.ExposedPorts)), []string{fmt.Sprintf("%d/tcp", bin.Ports[0])}},
		{"env", c.Env, []string{"PATH=/usr/local/bin"}}, // no SSL_CERT_FILE: the binary carries its roots
		{"created", cf.Created.Time.Unix(), src.Time.Unix()},
		{"source label", c.Labels["org.opencontainers.image.source"], "https://github.com/pacerhq/pacer"},
		{"revision label", c.Labels["org.opencontainers.image.revision"], src.Revision},
		{"version label", c.Labels["org.opencontainers.image.version"], src.Version},
	} {
		if !reflect.DeepEqual(check.got, check.want) {
			t.Errorf("%s: %#v, want %#v", check.what, check.got, check.want)
		}
	}
	files := extract(t, img)
	exe, ok := files["usr/local/bin/"+bin.Name]
	if !ok || exe.hdr.Mode&0o111 == 0 {
		t.Fatalf("no executable usr/local/bin/%s in the image", bin.Name)
	}
	checkELF(t, exe.data, p)
	checkRootsLinked(t, exe.data)
	for name, f := range files {
		wantUID := 0
		if name == "home/nonroot/" {
			wantUID = UID
		}
		if f.hdr.Uid != wantUID || f.hdr.Gid != wantUID {
			t.Errorf("%s: owner %d:%d, want %d:%d", name, f.hdr.Uid, f.hdr.Gid, wantUID, wantUID)
		}
	}
	if pw := string(files["etc/passwd"].data); !strings.Contains(pw, "\nnonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", pw)
	}
	return files
}

// checkELF checks that bin is a static 64-bit Linux executable for p's
// CPU: no interpreter, so no C library needed.
func checkELF(t *testing.T, bin []byte, p v1.Platform) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("the binary is not ELF: %v", err)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[p.Architecture]
	if f.Machine != want || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
		t.Errorf("the binary is %s %s %s, want %s ELFCLASS64 ET_EXEC", f.Machine, f.Class, f.Type, want)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Error("the binary has an interpreter (PT_INTERP): it is not static")
		}
	}
}

// checkRootsLinked checks, as `go version -m` would, that bin links
// golang.org/x/crypto/x509roots/fallback: the image has no CA bundle, so
// the binary verifies TLS certificates with the roots it carries.
func checkRootsLinked(t *testing.T, bin []byte) {
	t.Helper()
	bi, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("the binary has no Go build information: %v", err)
	}
	if !slices.ContainsFunc(bi.Deps, func(m *debug.Module) bool { return m.Path == "golang.org/x/crypto/x509roots/fallback" }) {
		t.Errorf("the binary (%s) does not link golang.org/x/crypto/x509roots/fallback: it has no CA roots in an image without a CA bundle", bi.Path)
	}
}

// extract reads img's file system (its layers flattened) by path, a
// folder's ending in "/".
func extract(t *testing.T, img v1.Image) map[string]imageFile {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	out := map[string]imageFile{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if h.Typeflag == tar.TypeDir {
			name += "/" // as the layers name folders (mutate.Extract drops the slash)
		}
		out[name] = imageFile{hdr: h, data: b}
	}
}

// unpack writes files into dir (owners are left to the unpacking user).
func unpack(t *testing.T, files map[string]imageFile, dir string) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(files)) { // a folder before its contents
		f, path := files[name], filepath.Join(dir, filepath.FromSlash(name))
		var err error
		switch f.hdr.Typeflag {
		case tar.TypeDir:
			if err = os.Mkdir(path, 0o755); err == nil {
				err = os.Chmod(path, fs.FileMode(f.hdr.Mode&0o777)|modeBits(f.hdr.Mode))
			}
		case tar.TypeReg:
			err = os.WriteFile(path, f.data, fs.FileMode(f.hdr.Mode&0o777))
		case tar.TypeSymlink:
			err = os.Symlink(f.hdr.Linkname, path)
		default:
			err = fmt.Errorf("unexpected type %c", f.hdr.Typeflag)
		}
		if err != nil {
			t.Fatalf("unpacking %s: %v", name, err)
		}
	}
}

func modeBits(m int64) fs.FileMode {
	if m&0o1000 != 0 {
		return fs.ModeSticky
	}
	return 0
}

// built is what one run of the images command printed: the index's
// digest, and every digest line (the layout's path left out).
type built struct {
	index   v1.Hash
	digests string
}

func (b built) String() string { return b.digests }

// buildTool compiles the images command into dir, without -race.
func buildTool(t *testing.T, root, dir string) string {
	t.Helper()
	tool := filepath.Join(dir, "images")
	cmd := exec.Command("go", "build", "-o", tool, "./services/gen/images")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./services/gen/images: %v\n%s", err, b)
	}
	return tool
}

// runTool builds testBinary's image index into out with the images
// command, its progress in the test log.
func runTool(t *testing.T, tool, root, out string) built {
	t.Helper()
	cmd := exec.Command(tool, "-root", root, "-out", out, "-binaries", testBinary, "-platforms", "linux/amd64,linux/arm64")
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, logWriter{t}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	var b built
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == testBinary:
			h, err := v1.NewHash(f[1])
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			b.index = h
			b.digests += f[0] + " " + f[1] + "\n"
		case len(f) == 2 && strings.HasPrefix(f[1], "sha256:"):
			b.digests += line + "\n"
		}
	}
	if b.index == (v1.Hash{}) {
		t.Fatalf("the images command printed no index for %s:\n%s", testBinary, stdout.String())
	}
	return b
}

// logWriter writes progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}
