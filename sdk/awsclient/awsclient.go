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
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
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

// Load returns an aws.Config from the standard chain. Extra options are
// passed to config.LoadDefaultConfig. When endpoints are overridden for a
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
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("awsclient: load config: %w", err)
	}
	return cfg, nil
}

// DynamoDB returns a DynamoDB client for cfg. With a local endpoint (from the
// environment or an option's BaseEndpoint) it skips response CRC32 checks.
func DynamoDB(cfg aws.Config, opts ...func(*dynamodb.Options)) *dynamodb.Client {
	local := loopback(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")) || loopback(os.Getenv("AWS_ENDPOINT_URL"))
	return dynamodb.NewFromConfig(cfg, append(opts, func(o *dynamodb.Options) {
		if local || (o.BaseEndpoint != nil && loopback(*o.BaseEndpoint)) {
			o.DisableValidateResponseChecksum = true
		}
	})...)
}

// SQS returns an SQS client for cfg.
func SQS(cfg aws.Config, opts ...func(*sqs.Options)) *sqs.Client {
	return sqs.NewFromConfig(cfg, opts...)
}
