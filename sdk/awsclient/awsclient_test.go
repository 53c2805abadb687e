package awsclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// Load's clients keep their connections for the next calls however many
// were in flight: a second round of 50 concurrent calls opens none. The
// control, the SDK's default HTTP client in the same run, keeps 10 and opens
// the other 40 again.
func TestLoadKeepsConnectionsForConcurrentCalls(t *testing.T) {
	const calls = 50
	var opened atomic.Int64
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Hold each call until the round's 50 are in flight, so that they
		// need 50 connections at once.
		mu.Lock()
		arrived++
		wait := all
		if arrived%calls == 0 {
			close(all)
			all = make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-wait:
		case <-time.After(5 * time.Second):
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	rounds := func(cfg aws.Config) (first, second int64) {
		c := DynamoDB(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL) })
		round := func() int64 {
			before := opened.Load()
			var wg sync.WaitGroup
			for range calls {
				wg.Go(func() {
					if _, err := c.DescribeLimits(t.Context(), &dynamodb.DescribeLimitsInput{}); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			return opened.Load() - before
		}
		return round(), round()
	}
	cfg, err := Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if first, second := rounds(cfg); first != calls || second != 0 {
		t.Errorf("Load's client opened %d connections for %d concurrent calls, then %d for the next %d; want %d, then 0", first, calls, second, calls, calls)
	}
	control := cfg.Copy()
	control.HTTPClient = nil // the SDK's default
	if first, second := rounds(control); first != calls || second < calls-10 {
		t.Errorf("control (the SDK's default client) opened %d, then %d connections; want %d, then at least %d: the test cannot tell the clients apart", first, second, calls, calls-10)
	}
}
