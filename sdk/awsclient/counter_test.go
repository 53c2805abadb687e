package awsclient

import (
	"context"
	"sync"
	"testing"
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
