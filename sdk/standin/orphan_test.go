package standin_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/standin"
)

const helperEnv = "PACER_STANDIN_ORPHAN_HELPER"

// runHelper starts every stand-in (with a private Postgres cluster, so that
// one is ours too), says READY and waits to be killed.
func runHelper() {
	_, err := standin.Start(context.Background(), standin.Config{DynamoDB: true, SQS: true, Postgres: true, PrivatePostgres: true})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	fmt.Println("READY")
	select {}
}

// A test binary that is killed (SIGKILL: no deferred Close, no signal
// handler) leaves no stand-in process behind: java, node and the private
// Postgres cluster all die with it.
func TestKilledParentLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if t := sc.Text(); strings.HasPrefix(t, "READY") || strings.HasPrefix(t, "ERROR") {
				line <- t
				return
			}
		}
		line <- "EOF"
	}()
	select {
	case l := <-line:
		if l != "READY" {
			t.Fatalf("helper: %s", l)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("helper not ready after 2 minutes")
	}

	// The stand-ins, and the private cluster's own children.
	procs := descendants(cmd.Process.Pid)
	comms := map[string]bool{}
	for _, p := range procs {
		comms[p.comm] = true
	}
	for _, want := range []string{"java", "node", "postgres"} {
		if !comms[want] {
			t.Fatalf("no %s among the helper's descendants %+v", want, procs)
		}
	}

	// A killed parent cannot remove its private cluster's folder (the next
	// private start sweeps it); remove it here once the cluster is gone.
	for _, p := range procs {
		if p.ppid == cmd.Process.Pid && p.comm == "postgres" {
			if dir := argAfter(p.pid, "-k"); strings.Contains(dir, "pacer-pg-") {
				t.Cleanup(func() { _ = os.RemoveAll(dir) })
			}
		}
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var left []proc
		for _, p := range procs {
			if p.alive() {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphans still running 15s after the parent was killed: %+v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// argAfter returns the command-line argument after flag of process pid.
func argAfter(pid int, flag string) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	args := strings.Split(string(b), "\x00")
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

// proc is a process; start (its start time) guards against pid reuse.
type proc struct {
	pid   int
	ppid  int
	comm  string
	start string
}

func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return proc{}, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return proc{}, false
	}
	f := strings.Fields(s[close+1:])
	if len(f) < 20 || f[0] == "Z" {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return proc{pid: pid, ppid: ppid, comm: s[open+1 : close], start: f[19]}, true
}

func (p proc) alive() bool {
	q, ok := readProc(p.pid)
	return ok && q.start == p.start
}

// descendants lists every live process below root.
func descendants(root int) []proc {
	ents, _ := os.ReadDir("/proc")
	byParent := map[int][]proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			byParent[p.ppid] = append(byParent[p.ppid], p)
		}
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		for _, c := range byParent[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return out
}
