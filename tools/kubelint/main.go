// Command kubelint validates Kubernetes manifests with kubeconform, in
// strict mode, against the schemas of the pinned Kubernetes and KEDA
// versions (package kubeschema), building them first when they are not
// there yet. With no files it only builds them. make deploy-lint runs it
// on deploy/k8s:
//
//	go -C tools run ./kubelint -schemas "$PWD/.cache/kubeschema" "$PWD"/deploy/k8s/*.yaml
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/pacerhq/pacer/tools/kubeschema"
)

func main() {
	dir := flag.String("schemas", "", "the folder of the built schemas (required), e.g. .cache/kubeschema")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "kubelint: -schemas is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg := kubeschema.Config{Dir: *dir}
	if err := kubeschema.Build(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kubelint:", err)
		os.Exit(1)
	}
	if n, err := lint(cfg, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "kubelint:", err)
		os.Exit(1)
	} else if n > 0 {
		fmt.Fprintf(os.Stderr, "kubelint: %d findings\n", n)
		os.Exit(1)
	}
}

// lint validates each file, printing its findings; it returns how many
// there were.
func lint(cfg kubeschema.Config, files []string) (int, error) {
	n := 0
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return n, err
		}
		findings, err := kubeschema.Validate(cfg, f, r)
		r.Close()
		if err != nil {
			return n, err
		}
		for _, line := range findings {
			fmt.Println(line)
		}
		n += len(findings)
	}
	if len(files) > 0 && n == 0 {
		fmt.Printf("kubelint: %d files valid against Kubernetes %s and KEDA %s (strict)\n", len(files), kubeschema.Kubernetes, kubeschema.KEDA)
	}
	return n, nil
}
