package analytics_test

import (
	"testing"

	"github.com/pacerhq/pacer/sdk/standin"
)

// The end-to-end test runs the real stack on the stand-ins.
func TestMain(m *testing.M) { standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true}) }
