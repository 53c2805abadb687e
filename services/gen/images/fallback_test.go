package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// probe is the program TestBinariesCarryRootsAndZones runs in an image.
const probe = "gen/images/testdata/probe"

// An image has no CA bundle and no time zones, yet a binary that imports
// services/internal/fallback, as every deployed binary does (internal/arch
// checks that they link it), verifies a public root against the system's
// roots and loads time zones in it: the probe (testdata/probe), compiled
// like the deployed binaries and put in an image as Build builds one, runs
// in it as runIsolated runs the worker, with the image's environment only
// (no SSL_CERT_FILE, SSL_CERT_DIR or ZONEINFO). Built without that import
// (-tags nofallback), the same probe fails both checks in the same image:
// the image really lacks them, and the test can fail.
func TestBinariesCarryRootsAndZones(t *testing.T) {
	ctx := context.Background()
	root := repoRoot(t)
	p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	src, err := SourceOf(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	base, err := layer(baseEntries(), src.Time)
	if err != nil {
		t.Fatal(err)
	}
	isrg := publicRoot(t, "ISRG Root X1")
	goflags, err := exec.Command("go", "env", "GOFLAGS").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tags   string
		status int
		want   string
	}{
		{"", 0, "roots ISRG Root X1: ok\nzone Asia/Seoul: ok KST +32400\nzone Europe/Paris: ok CET +3600\n"},
		{"nofallback", 1, "roots ISRG Root X1: x509: certificate signed by unknown authority\n" +
			"zone Asia/Seoul: unknown time zone Asia/Seoul\nzone Europe/Paris: unknown time zone Europe/Paris\n"},
	} {
		t.Run("tags="+c.tags, func(t *testing.T) {
			t.Setenv("GOFLAGS", strings.TrimSpace(string(goflags))+" -tags="+c.tags)
			dir := t.TempDir()
			if err := compile(ctx, root, dir, p, []string{probe}); err != nil {
				t.Fatal(err)
			}
			img, err := platformImage(filepath.Join(dir, filepath.Base(probe)), p, Binary{Name: filepath.Base(probe)}, base, src)
			if err != nil {
				t.Fatal(err)
			}
			rootfs := filepath.Join(dir, "rootfs")
			if err := os.Mkdir(rootfs, 0o755); err != nil {
				t.Fatal(err)
			}
			unpack(t, extract(t, img), rootfs)
			cmd := inImage(t, img, rootfs)
			cmd.Args = append(cmd.Args, "Asia/Seoul", "Europe/Paris")
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(isrg), &out, &out
			err = cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("cannot run the probe chrooted in new user, mount and PID namespaces: %v %s", err, userNamespaces)
			}
			if got := cmd.ProcessState.ExitCode(); got != c.status || out.String() != c.want {
				t.Errorf("the probe exited %d and printed:\n%s\nwant %d and:\n%s", got, out.String(), c.status, c.want)
			}
		})
	}
}

// publicRoot is the PEM of the root named cn in
// golang.org/x/crypto/x509roots/fallback's bundle (Mozilla's roots).
func publicRoot(t *testing.T, cn string) []byte {
	t.Helper()
	for r := range bundle.Roots() {
		c, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			t.Fatal(err)
		}
		if c.Subject.CommonName == cn {
			return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
		}
	}
	t.Fatalf("no root %q in golang.org/x/crypto/x509roots/fallback/bundle", cn)
	return nil
}
