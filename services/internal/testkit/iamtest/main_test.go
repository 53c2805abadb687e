package iamtest

import (
	"testing"

	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true})
}
