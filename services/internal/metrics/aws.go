package metrics

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/config"
)

// AWS counts and times AWS calls (pacer_aws_calls_total,
// pacer_aws_call_duration_seconds) through an SDK middleware (Attach), and
// DynamoDB's consumed capacity (pacer_aws_consumed_capacity_units_total)
// as the ddb SDK's Observer.
type AWS struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	capacity *prometheus.CounterVec
}

// awsOperations are the operations Pacer's binaries call, initialised to 0.
var awsOperations = map[string][]string{
	"dynamodb": {"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem", "BatchWriteItem", "TransactWriteItems"},
	"sqs":      {"SendMessage", "ReceiveMessage", "DeleteMessageBatch", "GetQueueAttributes"},
}

// NewAWS registers the AWS call metrics on reg; the counters start at 0
// for the operations Pacer calls and, for capacity, on each of tables.
func NewAWS(reg prometheus.Registerer, tables ...string) *AWS {
	a := &AWS{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_aws_calls_total",
			Help: "AWS calls by service, operation and outcome (ok, throttled, server_error, error); retries of one call count once.",
		}, []string{"service_name", "operation", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pacer_aws_call_duration_seconds",
			Help:    "AWS call latency, retries included.",
			Buckets: CallBuckets,
		}, []string{"service_name", "operation"}),
		capacity: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pacer_aws_consumed_capacity_units_total",
			Help: "DynamoDB ConsumedCapacity.CapacityUnits as reported, by table and operation.",
		}, []string{"table", "operation"}),
	}
	reg.MustRegister(a.calls, a.duration, a.capacity)
	for svc, ops := range awsOperations {
		for _, op := range ops {
			for _, o := range []string{"ok", "throttled", "server_error", "error"} {
				a.calls.WithLabelValues(svc, op, o)
			}
		}
	}
	for _, t := range tables {
		for _, op := range awsOperations["dynamodb"] {
			a.capacity.WithLabelValues(t, op)
		}
	}
	return a
}

// Attach instruments the clients made from cfg afterwards.
func (a *AWS) Attach(cfg *aws.Config) {
	awsclient.Observe(cfg, func(_ context.Context, c awsclient.Call) {
		svc := strings.ToLower(c.Service)
		a.calls.WithLabelValues(svc, c.Operation, callOutcome(c.Err)).Inc()
		a.duration.WithLabelValues(svc, c.Operation).Observe(c.Duration.Seconds())
	})
}

// DeclareConsumedCapacity declares the setting, shared by the binaries
// that count consumed capacity (asyncevent-api, asyncevent-worker and
// photo-api), that says whether their DynamoDB calls ask for their
// consumed capacity (ReturnConsumedCapacity TOTAL: the ddb SDK asks when it
// has an Observer, unless ddb.Config.SkipConsumedCapacity; these binaries
// observe DynamoDB only for that counter, so they set AWS as their
// Observer only when p is true). Auto is true on AWS, where the figure is free, and false against
// local stand-ins: DynamoDB Local computes it inside the table-wide lock
// every write takes, and asking cost its transactions about 14 % of their
// throughput (bench/cmd/load; docs/metrics.md).
func DeclareConsumedCapacity(s *config.Set, p *bool) {
	s.AutoBool(p, "consumed-capacity", "PACER_CONSUMED_CAPACITY", func() bool { return !awsclient.Local() },
		"ask DynamoDB for each call's consumed capacity (pacer_aws_consumed_capacity_units_total): true, false, or auto "+
			"(true unless the AWS endpoints are local: DynamoDB Local computes it inside its table-wide write lock)")
}

// ObserveCall implements ddb.Observer: it adds the call's consumed
// capacity (its count and latency come from Attach).
func (a *AWS) ObserveCall(_ context.Context, c ddb.Call) {
	if c.Capacity > 0 {
		a.capacity.WithLabelValues(c.Table, c.Operation).Add(c.Capacity)
	}
}

var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

// callOutcome is "ok", "throttled" (the SDK's throttle codes:
// ProvisionedThroughputExceeded, RequestLimitExceeded, ThrottlingException,
// SQS's RequestThrottled, ...), "server_error" (the service answered 5xx
// after the SDK's retries: DynamoDB's InternalServerError, a
// ServiceUnavailable; DynamoDB's SystemErrors as the caller saw them) or
// "error" (anything else: a refused condition, a validation error, no
// answer at all).
func callOutcome(err error) string {
	var status interface{ HTTPStatusCode() int }
	switch {
	case err == nil:
		return "ok"
	case throttles.IsErrorThrottle(err) == aws.TrueTernary:
		return "throttled"
	case errors.As(err, &status) && status.HTTPStatusCode() >= 500:
		return "server_error"
	}
	return "error"
}
