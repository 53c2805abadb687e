package ddb_test

import (
	"flag"
	"os"
	"testing"

	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if fuzzOnly() {
		// The fuzz targets are pure: do not start a JVM in the fuzzing
		// coordinator and in each of its workers.
		os.Exit(m.Run())
	}
	standin.RunTests(m, standin.Config{DynamoDB: true})
}

// fuzzOnly reports whether this process only fuzzes: a fuzz worker, or
// `go test -run '^$' -fuzz FuzzX`, which runs no test or example.
func fuzzOnly() bool {
	get := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	return get("test.fuzzworker") == "true" || (get("test.fuzz") != "" && get("test.run") == "^$")
}
