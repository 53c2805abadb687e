package awsclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Observe reports each call once, with its service, operation, duration
// and final error, retries included.
func TestObserve(t *testing.T) {
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.DescribeLimits" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow down"}`))
			return
		}
		_, _ = w.Write([]byte(`{"TableNames":[]}`))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}
	var calls []Call
	Observe(&cfg, func(_ context.Context, c Call) {
		mu.Lock()
		calls = append(calls, c)
		mu.Unlock()
	})
	client := DynamoDB(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(srv.URL); o.RetryMaxAttempts = 2 })
	ctx := context.Background()
	if _, err := client.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DescribeLimits(ctx, &dynamodb.DescribeLimitsInput{}); err == nil {
		t.Fatal("DescribeLimits succeeded against a throttling server")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 || hits != 3 { // the throttled call was tried twice
		t.Fatalf("observed %d calls over %d requests: %+v", len(calls), hits, calls)
	}
	if c := calls[0]; c.Service != "DynamoDB" || c.Operation != "ListTables" || c.Err != nil || c.Duration <= 0 {
		t.Errorf("first call observed as %+v", c)
	}
	if c := calls[1]; c.Operation != "DescribeLimits" || c.Err == nil {
		t.Errorf("throttled call observed as %+v", c)
	}
}
