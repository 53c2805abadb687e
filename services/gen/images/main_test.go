package main

import (
	"testing"

	"github.com/pacerhq/pacer/sdk/standin"
)

// The image test runs the worker's image, which needs DynamoDB and SQS.
func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true})
}
