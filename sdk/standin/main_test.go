package standin_test

import (
	"os"
	"testing"

	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) {
	// The orphan test re-runs this binary as a helper that starts stand-ins
	// and waits to be killed.
	if os.Getenv(helperEnv) != "" {
		runHelper()
		return
	}
	standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true, Postgres: true})
}
