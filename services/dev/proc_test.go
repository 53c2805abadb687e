package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// proc identifies a process; start (jiffies since boot) guards against
// pid reuse.
type proc struct {
	pid   int
	comm  string
	start string
}

// readProc parses /proc/<pid>/stat.
func readProc(pid int) (p proc, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return proc{}, 0, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return proc{}, 0, false
	}
	f := strings.Fields(s[close+1:]) // state ppid pgrp ... starttime is field 22 overall
	if len(f) < 20 || f[0] == "Z" {
		return proc{}, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	return proc{pid: pid, comm: s[open+1 : close], start: f[19]}, ppid, true
}

// children lists the live children of parent whose command is one of comms.
func children(parent int, comms ...string) []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, ppid, ok := readProc(pid)
		if !ok || ppid != parent {
			continue
		}
		for _, c := range comms {
			if p.comm == c {
				out = append(out, p)
			}
		}
	}
	return out
}

// alive reports whether p still runs (and is not a zombie).
func alive(p proc) bool {
	q, _, ok := readProc(p.pid)
	return ok && q.start == p.start
}

// waitGone fails the test unless every process in ps has exited before the
// deadline.
func waitGone(t *testing.T, ps []proc, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var left []proc
		for _, p := range ps {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stand-in processes still running %s after shutdown: %+v", within, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
