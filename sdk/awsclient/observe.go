package awsclient

import (
	"context"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Call is one AWS API call as a client made it.
type Call struct {
	Service   string // the SDK's service id: "DynamoDB", "SQS"
	Operation string // "PutItem", "ReceiveMessage", ...
	// Duration is the whole call, retries and their backoff included.
	Duration time.Duration
	Err      error // the call's final error, nil on success
}

// Observe adds a middleware to cfg that reports every finished call to
// fn, once per call (retries included in it); clients made from cfg
// afterwards are observed. fn runs on the caller's goroutine: keep it fast.
func Observe(cfg *aws.Config, fn func(ctx context.Context, c Call)) {
	// Clip: cfg may be a copy of a config others append to as well.
	cfg.APIOptions = append(slices.Clip(cfg.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("pacer.CallObserver",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				start := time.Now()
				out, md, err := next.HandleInitialize(ctx, in)
				fn(ctx, Call{
					Service: awsmiddleware.GetServiceID(ctx), Operation: awsmiddleware.GetOperationName(ctx),
					Duration: time.Since(start), Err: err,
				})
				return out, md, err
			}), middleware.After)
	})
}
