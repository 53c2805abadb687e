package awsclient

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

func TestCounter(t *testing.T) {
	c := NewCounter()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			c.add("DynamoDB.PutItem")
			c.add("DynamoDB.Query")
			c.add("SQS.SendMessage")
		})
	}
	wg.Wait()
	cases := []struct {
		op   string
		want int
	}{
		{"DynamoDB.PutItem", 50},
		{"DynamoDB.Query", 50},
		{"DynamoDB", 100},
		{"SQS", 50},
		{"SQS.ReceiveMessage", 0},
		{"Dynamo", 0}, // a service name must match whole
	}
	for _, tc := range cases {
		if got := c.Count(tc.op); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.op, got, tc.want)
		}
	}
	if c.Total() != 150 {
		t.Fatalf("Total = %d", c.Total())
	}
	if s := c.String(); s != "DynamoDB.PutItem=50 DynamoDB.Query=50 SQS.SendMessage=50" {
		t.Fatalf("String = %q", s)
	}
	c.Reset()
	if c.Total() != 0 || c.String() != "" {
		t.Fatalf("after Reset: %d %q", c.Total(), c.String())
	}
}

// With an endpoint override and no credentials, Load uses static local
// credentials and us-east-1.
func TestLoadLocalDefaults(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:1")
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	if !Local() {
		t.Fatal("Local() = false with AWS_ENDPOINT_URL_DYNAMODB set")
	}
	cfg, err := Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "us-east-1" {
		t.Fatalf("region %q", cfg.Region)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "local" {
		t.Fatalf("credentials %+v %v", creds, err)
	}
	// Attach adds one API option; clients made afterwards are counted.
	c := NewCounter()
	before := len(cfg.APIOptions)
	c.Attach(&cfg)
	if len(cfg.APIOptions) != before+1 {
		t.Fatalf("Attach added %d API options", len(cfg.APIOptions)-before)
	}
	if o := DynamoDB(cfg).Options(); !o.DisableValidateResponseChecksum {
		t.Fatal("local DynamoDB client validates CRC32")
	}
}

// Only a loopback endpoint is local: a VPC or FIPS endpoint override is real
// AWS and keeps the standard credentials and checks.
func TestLocalMeansLoopback(t *testing.T) {
	for _, c := range []struct {
		endpoint string
		want     bool
	}{
		{"http://127.0.0.1:8000", true},
		{"http://localhost:4566", true},
		{"http://[::1]:8000", true},
		{"https://vpce-0abc.dynamodb.eu-west-1.vpce.amazonaws.com", false},
		{"https://dynamodb-fips.us-east-1.amazonaws.com", false},
		{"", false},
	} {
		t.Setenv("AWS_ENDPOINT_URL", "")
		t.Setenv("AWS_ENDPOINT_URL_SQS", "")
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", c.endpoint)
		if got := Local(); got != c.want {
			t.Errorf("Local() with %q = %v, want %v", c.endpoint, got, c.want)
		}
		if got := DynamoDB(aws.Config{Region: "us-east-1"}).Options().DisableValidateResponseChecksum; got != c.want {
			t.Errorf("CRC32 check skipped with %q = %v, want %v", c.endpoint, got, c.want)
		}
	}
}
