package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

// The kit's own collectors (HTTP and AWS), observed once, lint clean and
// match the contract (docs/metrics.md). The whole contract, every service's
// collectors in one registry, is checked by services/dev's
// TestEveryCollectorMatchesTheContract.
func TestKitCollectorsMatchTheContract(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	h := metrics.NewHTTP(reg, "asyncevent-api")
	a := metrics.NewAWS(reg, "T")
	if v := metricstest.Gather(t, reg).Value("pacer_aws_consumed_capacity_units_total", "table", "T", "operation", "TransactWriteItems"); v != 0 {
		t.Errorf("consumed capacity starts at %v, want 0", v)
	}
	srv := httptest.NewServer(h.Wrap(http.NewServeMux()))
	defer srv.Close()
	if resp, err := http.Get(srv.URL + "/nowhere"); err == nil {
		resp.Body.Close()
	}
	a.ObserveCall(context.Background(), ddb.Call{Operation: "PutItem", Table: "T", Capacity: 1})
	fams := metricstest.Gather(t, reg)
	metricstest.Check(t, fams, "pacer_http_request_duration_seconds", "pacer_aws_calls_total", "pacer_aws_consumed_capacity_units_total")
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
	if v := fams.Value("pacer_http_request_duration_seconds", "route", metrics.Unmatched, "code_class", "4xx"); v != 1 {
		t.Errorf("unmatched 4xx requests %v, want 1", v)
	}
	if v := fams.Value("pacer_aws_consumed_capacity_units_total", "table", "T", "operation", "PutItem"); v != 1 {
		t.Errorf("PutItem capacity %v, want 1", v)
	}
}

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
