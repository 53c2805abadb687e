// Package awsclient builds the aws-sdk-go-v2 configuration and clients that
// Pacer's services and tests share.
//
// With no endpoint overrides it uses the standard AWS credential chain and
// region, so the same binary runs against real AWS. When
// AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL_SQS is set (sdk/standin sets
// them for the local stand-ins), the clients talk to that endpoint instead.
// Only for a loopback endpoint (see Local) do they also default to fake
// credentials and us-east-1, and does the DynamoDB client skip the CRC32
// response check that DynamoDB Local does not satisfy on errors.
package awsclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Local reports whether an endpoint override in the environment
// (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS or AWS_ENDPOINT_URL)
// points at this machine (a loopback address or localhost): the local
// stand-ins. An override to anywhere else (a VPC or FIPS endpoint) is real
// AWS, and gets the standard credentials and checks.
func Local() bool {
	for _, k := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL"} {
		if loopback(os.Getenv(k)) {
			return true
		}
	}
	return false
}

// loopback reports whether endpoint is a URL on a loopback host.
func loopback(endpoint string) bool {
	if endpoint == "" {
		return false
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// MaxIdleConnsPerHost is how many idle connections to one endpoint the
// clients of HTTPClient keep for reuse: as many as the calls a busy Pacer
// process has in flight to DynamoDB or SQS (an API task serving hundreds of
// participations at once, a worker's allocator and deliveries).
const MaxIdleConnsPerHost = 512

// HTTPClient returns the SDK's default HTTP client (its timeouts, TLS and
// proxy settings) keeping up to MaxIdleConnsPerHost idle connections per
// endpoint instead of the SDK's 10. With the SDK's default, every call
// beyond the 10th in flight opens a connection (on AWS a TCP and TLS
// handshake) and closes it when done: at 500 participations in flight, one
// `make load` run left 6,393 sockets in TIME_WAIT on the machine.
func HTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = max(t.MaxIdleConns, 2*MaxIdleConnsPerHost)
		t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	})
}

// Load returns an aws.Config from the standard chain, with HTTPClient as
// its HTTP client. Extra options are passed to config.LoadDefaultConfig
// after those. When endpoints are overridden for a
// local stack and no credentials are configured, static fake credentials
// and us-east-1 are used, so a bare `AWS_ENDPOINT_URL_DYNAMODB=...` works.
func Load(ctx context.Context, opts ...func(*config.LoadOptions) error) (aws.Config, error) {
	if Local() {
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
			opts = append([]func(*config.LoadOptions) error{
				config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")),
			}, opts...)
		}
		if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
			opts = append([]func(*config.LoadOptions) error{config.WithRegion("us-east-1")}, opts...)
		}
	}
	// First, so that a caller's WithHTTPClient wins.
	opts = append([]func(*config.LoadOptions) error{config.WithHTTPClient(HTTPClient())}, opts...)
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("awsclient: load config: %w", err)
	}
	return cfg, nil
}

// DynamoDB returns a DynamoDB client for cfg. With a local endpoint (from the
// environment or an option's BaseEndpoint) it skips response CRC32 checks;
// with one from the environment it also retries without the client-side
// retry quota (see localRetryer).
func DynamoDB(cfg aws.Config, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	local := loopback(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")) || loopback(os.Getenv("AWS_ENDPOINT_URL"))
	// First, so that a caller's option setting a Retryer wins; the
	// endpoint is final only after the caller's options, hence the second.
	retryer := func(o *dynamodb.Options) {
		if local && cfg.Retryer == nil {
			o.Retryer = localRetryer()
		}
	}
	return dynamodb.NewFromConfig(cfg, append(append([]func(*dynamodb.Options){retryer}, opts...), func(o *dynamodb.Options) {
		if local || (o.BaseEndpoint != nil && loopback(*o.BaseEndpoint)) {
			o.DisableValidateResponseChecksum = true
		}
	})...)
}

// SQS returns an SQS client for cfg. With a local endpoint from the
// environment it retries without the client-side retry quota (see
// localRetryer).
func SQS(cfg aws.Config, opts ...func(*sqs.Options)) *sqs.Client {
	local := loopback(os.Getenv("AWS_ENDPOINT_URL_SQS")) || loopback(os.Getenv("AWS_ENDPOINT_URL"))
	retryer := func(o *sqs.Options) {
		if local && cfg.Retryer == nil {
			o.Retryer = localRetryer()
		}
	}
	return sqs.NewFromConfig(cfg, append([]func(*sqs.Options){retryer}, opts...)...)
}

// localRetryer is the SDK's standard retryer (same attempts and backoff)
// without its client-side rate limiter. The limiter is a retry quota that
// protects a remote service from retry storms: each retry spends tokens, and
// an empty bucket fails the call at once with "retry quota exceeded". The
// local stand-ins answer transient errors in bursts under load (DynamoDB
// Local's "too long waiting for a lock" 500s), which drains the quota
// process-wide and fails calls that a retry would have carried; against a
// loopback stand-in there is no fleet to protect.
func localRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = ratelimit.None })
}
