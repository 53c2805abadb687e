package awsfixture_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/internal/repo"
)

// make bench pipes the benchmarks through tools/benchratio.awk, which
// pairs impl=pacer with impl=bare and prints their ratios: a pair's
// figures (each side's mean over its runs: 450000 ns/op here) divide,
// a half without its pair is named, other lines pass.
func TestBenchRatio(t *testing.T) {
	out := `goos: linux
BenchmarkPollCost/impl=pacer-2   	    2607	    400000 ns/op	         1.000 aws-calls/op	   50000 B/op	     550 allocs/op
BenchmarkPollCost/impl=pacer-2   	    2607	    500000 ns/op	         1.000 aws-calls/op	   50000 B/op	     550 allocs/op
BenchmarkPollCost/impl=bare-2    	    3498	    300000 ns/op	         1.000 aws-calls/op	   40000 B/op	     500 allocs/op
BenchmarkLonely/impl=pacer-2     	      10	       100 ns/op	       0 B/op	       0 allocs/op
BenchmarkOther-2                 	      10	       100 ns/op
ok  	example	1.0s
`
	script, err := repo.File("tools", "benchratio.awk")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("awk", "-f", script)
	cmd.Stdin = strings.NewReader(out)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("awk: %v\n%s", err, got)
	}
	s := string(got)
	for _, want := range []string{
		"BenchmarkOther-2", // passed through
		"BenchmarkPollCost                           1.50x    1.25x      1.10x   (450000, 550)",
		"BenchmarkLonely                          missing its impl=bare half",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
