package metrics_test

import (
	"errors"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// The kit's collectors are checked against the contract (docs/metrics.md)
// with every service's, in one registry, by services/dev's
// TestEveryCollectorMatchesTheContract.

// AWS calls are counted by outcome: a throttling error is "throttled",
// another error "error".
func TestAWSOutcome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{&smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, "throttled"},
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, "throttled"},
		{&smithy.GenericAPIError{Code: "RequestThrottled"}, "throttled"},
		{&smithy.GenericAPIError{Code: "ConditionalCheckFailedException"}, "error"},
		{errors.New("dial tcp: refused"), "error"},
	} {
		if got := metrics.CallOutcome(c.err); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}
