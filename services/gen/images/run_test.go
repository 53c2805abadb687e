package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// runIsolated unpacks img's files into a folder, checks that it holds
// those files only, and runs the image's entrypoint in it as a container
// runtime would: chrooted to it, in new user, mount and PID namespaces
// (what `unshare --user --mount --pid --fork chroot` does), as the image's
// user (65532), with the image's environment plus the stand-ins' endpoints.
// The network is the host's, so the test reaches its ops port on
// loopback: it must answer /healthz and /readyz (DynamoDB and SQS
// reachable from inside), then stop cleanly on SIGTERM.
func runIsolated(t *testing.T, img v1.Image, files map[string]imageFile) {
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	unpack(t, files, rootfs)
	checkTree(t, rootfs, files)

	port := freePort(t)
	var output bytes.Buffer
	cmd := isolated(t, img, rootfs, port, &output)
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot run the image's entrypoint chrooted in new user, mount and PID namespaces: %v %s", err, userNamespaces)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
			t.Logf("the image's output:\n%s", output.String())
		}
	})
	checkIsolation(t, cmd.Process.Pid, rootfs)

	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for _, probe := range []string{"/healthz", "/readyz"} {
		if err := waitOK(base+probe, exited, time.Minute); err != nil {
			t.Fatalf("%s: %v", probe, err)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		stopped = true
		if waitErr != nil {
			t.Errorf("after SIGTERM: %v\n%s", waitErr, output.String())
		} else {
			t.Logf("the image's output:\n%s", output.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30 s after SIGTERM")
	}
}

// isolated is the command that runs img's entrypoint in rootfs (inImage)
// with its home, the worker's ops port, a table and queue of its own, and
// the stand-ins' endpoints.
func isolated(t *testing.T, img v1.Image, rootfs string, port int, output *bytes.Buffer) *exec.Cmd {
	t.Helper()
	name := fmt.Sprintf("imagetest%d", time.Now().UnixNano())
	env := []string{"HOME=" + Home,
		"PACER_WORKER_OPS_ADDR=127.0.0.1:" + strconv.Itoa(port), "PACER_WORKER_WAIT=1s",
		"PACER_ASYNCEVENT_TABLE=" + name, "PACER_ASYNCEVENT_QUEUE=" + name}
	for _, k := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_EC2_METADATA_DISABLED"} {
		env = append(env, k+"="+os.Getenv(k))
	}
	cmd := inImage(t, img, rootfs, env...)
	cmd.Stdout, cmd.Stderr = output, output
	return cmd
}

// inImage is the command that runs img's entrypoint as a container
// runtime would: chrooted to rootfs (img's files, unpacked), in new user,
// mount and PID namespaces, as the image's user (uid:gid mapped to this
// process's), with the image's environment plus env.
func inImage(t *testing.T, img v1.Image, rootfs string, env ...string) *exec.Cmd {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	uid, gid, ok := strings.Cut(cf.Config.User, ":")
	if !ok {
		t.Fatalf("user %q is not uid:gid", cf.Config.User)
	}
	ids := [2]int{}
	for i, s := range []string{uid, gid} {
		if ids[i], err = strconv.Atoi(s); err != nil {
			t.Fatalf("user %q is not numeric uid:gid", cf.Config.User)
		}
	}
	return &exec.Cmd{Path: cf.Config.Entrypoint[0], Args: cf.Config.Entrypoint, Env: append(slices.Clone(cf.Config.Env), env...), Dir: "/",
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:      rootfs,
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: ids[0], HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: ids[1], HostID: os.Getgid(), Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		}}
}

// userNamespaces is what a failure to start inImage's command says the
// test needs.
const userNamespaces = "(what `unshare --user --map-root-user --mount --pid --fork chroot` does); " +
	"this test needs user namespaces (sysctl user.max_user_namespaces > 0, and kernel.unprivileged_userns_clone=1 where it exists)"

// checkTree checks that the unpacked root holds the image's files and
// nothing else: no file of the host (its hostname, resolver, shell, CA
// bundle, time zones, Go toolchain or this checkout), only the files the
// builder put there.
func checkTree(t *testing.T, rootfs string, files map[string]imageFile) {
	t.Helper()
	var found []string
	err := filepath.WalkDir(rootfs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == rootfs {
			return err
		}
		r, _ := filepath.Rel(rootfs, p)
		r = filepath.ToSlash(r)
		if d.IsDir() {
			r += "/"
		}
		found = append(found, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(found)
	if want := slices.Sorted(maps.Keys(files)); !slices.Equal(found, want) {
		t.Fatalf("the unpacked root holds %d paths, the image %d: only in the root %v, only in the image %v",
			len(found), len(want), minus(found, want), minus(want, found))
	}
	want := []string{"etc/", "etc/group", "etc/passwd", "home/", "home/nonroot/", "tmp/", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/" + testBinary}
	if !slices.Equal(found, want) {
		t.Errorf("the image's files: %v, want %v", found, want)
	}
	wd, _ := os.Getwd()
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/bin/sh", "/proc", "/etc/ssl", "/usr/share/zoneinfo", strings.TrimSpace(string(goroot)), wd} {
		if _, err := os.Lstat(filepath.Join(rootfs, host)); err == nil {
			t.Errorf("the host's %s is in the image", host)
		}
	}
}

// checkIsolation checks, from the host's /proc, that pid is chrooted to
// rootfs, runs as 65532 in its user namespace and is PID 1 in its own.
func checkIsolation(t *testing.T, pid int, rootfs string) {
	t.Helper()
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	if root, err := os.Readlink(filepath.Join(proc, "root")); err != nil || root != rootfs {
		t.Errorf("the process's root is %q (%v), want %s", root, err, rootfs)
	}
	if m, err := os.ReadFile(filepath.Join(proc, "uid_map")); err != nil || !strings.HasPrefix(strings.Join(strings.Fields(string(m)), " "), strconv.Itoa(UID)+" ") {
		t.Errorf("the process's uid_map is %q (%v), want %d mapped", m, err, UID)
	}
	status, err := os.ReadFile(filepath.Join(proc, "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "NSpid:" && f[len(f)-1] != "1" {
			t.Errorf("%s: want PID 1 in its own PID namespace", line)
		}
	}
}

// waitOK polls url until it answers 200, the process exits or the
// deadline passes.
func waitOK(url string, exited <-chan struct{}, within time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(within)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not OK within %s: %w", within, err)
		}
		select {
		case <-exited:
			return errors.New("the process exited")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePort is a TCP port free on loopback now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// minus is a's elements that are not in b.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
