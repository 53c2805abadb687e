// Package awsclient builds the aws-sdk-go-v2 configuration and clients that
// Pacer's services and tests share.
//
// With no endpoint overrides it uses the standard AWS credential chain and
// region, so the same binary runs against real AWS. When
// AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL_SQS is set (sdk/standin sets
// them for the local stand-ins), the clients talk to that endpoint instead,
// and the DynamoDB client skips the CRC32 response check that DynamoDB Local
// does not satisfy on errors.
package awsclient

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Local reports whether any AWS endpoint override is set in the environment.
func Local() bool {
	return os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" || os.Getenv("AWS_ENDPOINT_URL_SQS") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
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
	local := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	return dynamodb.NewFromConfig(cfg, append(opts, func(o *dynamodb.Options) {
		if local || o.BaseEndpoint != nil {
			o.DisableValidateResponseChecksum = true
		}
	})...)
}

// SQS returns an SQS client for cfg.
func SQS(cfg aws.Config, opts ...func(*sqs.Options)) *sqs.Client {
	return sqs.NewFromConfig(cfg, opts...)
}
