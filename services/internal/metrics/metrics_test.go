package metrics_test

import (
	"errors"
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/pacerhq/pacer/services/internal/metrics"
)

// The kit's collectors are checked against the contract (docs/metrics.md)
// with every service's, in one registry, by services/dev's
// TestEveryCollectorMatchesTheContract.

// AWS calls are counted by outcome: a throttling error is "throttled",
// a 5xx answer "server_error", another error "error".
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
		{answered(500, &smithy.GenericAPIError{Code: "InternalServerError"}), "server_error"},
		{answered(503, &smithy.GenericAPIError{Code: "ServiceUnavailable"}), "server_error"},
		{answered(400, &smithy.GenericAPIError{Code: "ConditionalCheckFailedException"}), "error"},
		{answered(400, &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}), "throttled"},
	} {
		if got := metrics.CallOutcome(c.err); got != c.want {
			t.Errorf("%v: %s, want %s", c.err, got, c.want)
		}
	}
}

// answered is err as the SDK returns an error the service answered with
// status: wrapped in the operation's error and the HTTP response's.
func answered(status int, err error) error {
	resp := &smithyhttp.Response{Response: &http.Response{StatusCode: status}}
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "PutItem",
		Err: &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{Response: resp, Err: err}}}
}
