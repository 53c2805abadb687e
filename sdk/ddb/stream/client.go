package stream

import (
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/pacerhq/pacer/sdk/awsclient"
)

// NewClient returns a DynamoDB Streams client for cfg. AWS serves streams
// on their own endpoint; DynamoDB Local serves them on its DynamoDB
// endpoint, so with a local stack (awsclient.Local) and no
// AWS_ENDPOINT_URL_DYNAMODB_STREAMS the client uses
// AWS_ENDPOINT_URL_DYNAMODB.
func NewClient(cfg aws.Config, opts ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	if ep := os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"); ep != "" && awsclient.Local() && os.Getenv("AWS_ENDPOINT_URL_DYNAMODB_STREAMS") == "" {
		opts = append([]func(*dynamodbstreams.Options){func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(ep) }}, opts...)
	}
	return dynamodbstreams.NewFromConfig(cfg, opts...)
}
