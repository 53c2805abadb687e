package awsclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// A client for a loopback endpoint retries every failed call however many
// fail at once: the standard retryer's quota (500 tokens, 5 per retry)
// would fail calls beyond the 100th concurrent retry without trying again.
// The control, a config that names the standard retryer, shows the quota
// biting in the same run, so the test can tell the two apart.
func TestLocalClientsRetryWithoutQuota(t *testing.T) {
	const calls = 150 // > 500/5 retries the quota allows
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"__type":"InternalServerError","message":"too long waiting for a lock"}`))
	}))
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL) // a loopback stand-in
	endpoint := aws.String(srv.URL)
	clients := map[string]func(aws.Config) func(context.Context){
		"DynamoDB": func(cfg aws.Config) func(context.Context) {
			c := DynamoDB(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = endpoint; o.RetryMaxAttempts = 2 })
			return func(ctx context.Context) { _, _ = c.DescribeLimits(ctx, &dynamodb.DescribeLimitsInput{}) }
		},
		"SQS": func(cfg aws.Config) func(context.Context) {
			c := SQS(cfg, func(o *sqs.Options) { o.BaseEndpoint = endpoint; o.RetryMaxAttempts = 2 })
			return func(ctx context.Context) { _, _ = c.ListQueues(ctx, &sqs.ListQueuesInput{}) }
		},
	}
	base := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}
	standard := base
	standard.Retryer = func() aws.Retryer { return retry.NewStandard() }
	for name, client := range clients {
		run := func(cfg aws.Config) int64 {
			hits.Store(0)
			call := client(cfg)
			var wg sync.WaitGroup
			for range calls {
				wg.Go(func() { call(context.Background()) })
			}
			wg.Wait()
			return hits.Load()
		}
		if got := run(base); got != 2*calls {
			t.Errorf("%s local client: %d requests for %d calls of 2 attempts each, want %d (a retry quota refused some retries)", name, got, calls, 2*calls)
		}
		if got := run(standard); got >= 2*calls {
			t.Errorf("%s control: the standard retryer made %d requests for %d calls; its quota should have refused some retries", name, got, calls)
		}
	}
}
