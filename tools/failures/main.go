// Command failures prints, for each failed test in test2json streams, the
// lines where the test reported (file_test.go:NN: …) and any panic: the
// last lines of a long run's output, where a reader of a truncated CI log
// finds why it failed. make test runs it after the list of slowest tests.
//
// Usage: failures [-lines N] FILE.json...
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// event is one test2json record (go doc test2json).
type event struct {
	Action, Package, Test, Output string
}

// reported matches what t.Error, t.Fatal and t.Log print, and panics.
var reported = regexp.MustCompile(`^\s+\S+\.go:\d+: |^panic: |^\s*--- FAIL: `)

func main() {
	lines := flag.Int("lines", 12, "the most reported lines to print per failed test (the last ones)")
	flag.Parse()
	type key struct{ pkg, test string }
	out := map[key][]string{}
	var failed []key
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, "failures:", err)
			os.Exit(1)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Test == "" {
				continue
			}
			k := key{e.Package, e.Test}
			switch e.Action {
			case "output":
				if reported.MatchString(e.Output) {
					out[k] = append(out[k], strings.TrimRight(e.Output, "\n"))
				}
			case "fail":
				failed = append(failed, k)
			}
		}
		f.Close()
	}
	for _, k := range failed {
		if strings.Contains(k.test, "/") && len(out[k]) == 0 {
			continue
		}
		ls := out[k]
		if len(ls) > *lines {
			ls = ls[len(ls)-*lines:]
		}
		fmt.Printf("FAIL %s %s\n", k.pkg, k.test)
		for _, l := range ls {
			fmt.Println("  " + strings.TrimSpace(l))
		}
	}
}
