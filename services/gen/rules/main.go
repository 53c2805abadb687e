// Command rules prints Pacer's Prometheus rule file (recording and
// alerting rules) from package deploy/alarm: `make rules` writes it to
// deploy/prometheus/rules.yml, and `make verify` checks that file is
// current and runs rules_test.yml with promtool.
package main

import (
	"fmt"
	"os"

	"github.com/pacerhq/pacer/deploy/alarm"
)

func main() {
	if err := alarm.WritePrometheus(os.Stdout, alarm.Defaults()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
