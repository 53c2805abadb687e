// Command deploygen writes Pacer's deployment from what the code declares:
// deploy/aws/pacer.template.json (CloudFormation, one stack per stage) and
// deploy/k8s/*.yaml (Kubernetes: the namespace, Deployments, an ALB
// Ingress and the worker's KEDA ScaledObject). `make deploy-gen` runs it;
// `make deploy-check` (part of `make verify`) runs it with -check, which
// fails when a committed file differs from what the code generates.
//
// Sources: the tables' ddb.Schema (their CreateTableInput, what Ensure
// sends), the binaries' declared settings and defaults (config.Set), the
// autoscaling policy and alarms of deploy/alarm, the analytics DDL and
// queries (analytics/), and each binary's IAM actions (access.go, proven
// against the calls the binaries make by access_test.go).
//
// Run it from the repository root.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", ".", "repository root: reads analytics/, writes deploy/aws and deploy/k8s")
	check := flag.Bool("check", false, "write nothing; fail if a committed file differs from what the code generates")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "deploygen:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	spec, err := Build(root)
	if err != nil {
		return err
	}
	files, err := Files(spec)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var stale []string
	for _, n := range names {
		path := filepath.Join(root, n)
		if check {
			old, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(old, files[n]) {
				stale = append(stale, n)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[n], 0o644); err != nil {
			return err
		}
	}
	if check {
		// A file of ours that the code no longer generates is stale too.
		for _, dir := range []string{"deploy/aws", "deploy/k8s"} {
			entries, _ := os.ReadDir(filepath.Join(root, dir))
			for _, e := range entries {
				if n := dir + "/" + e.Name(); !e.IsDir() && files[n] == nil && !strings.HasPrefix(e.Name(), "README") {
					stale = append(stale, n+" (not generated any more)")
				}
			}
		}
		if len(stale) > 0 {
			return errors.New("out of date, run make deploy-gen: " + strings.Join(stale, ", "))
		}
	}
	return nil
}
