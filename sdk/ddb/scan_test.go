package ddb_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// Entity.Scan returns only its own entity type, filtered, across pages;
// through a scoped view only the tenant's items.
func TestScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, caps := entities(env.Table)
	var rs []*request
	for i := 0; i < 30; i++ {
		st, user := received, "alice"
		if i%3 == 0 {
			st = queued
		}
		if i%2 == 0 {
			user = "bob"
		}
		rs = append(rs, &request{RequestID: fmt.Sprintf("r%02d", i), UserID: user, Status: st})
	}
	if err := reqs.BatchPut(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if err := caps.Put(&capacity{EventID: "e1", Remaining: 3}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	count := func(seq func(func(*request, error) bool)) (n int) {
		for r, err := range seq {
			if err != nil {
				t.Fatal(err)
			}
			if r.RequestID == "" {
				t.Fatalf("not a request: %+v", r)
			}
			n++
		}
		return n
	}
	if n := count(reqs.Scan(ctx, nil)); n != 30 {
		t.Fatalf("all requests: %d, want 30", n)
	}
	f := expression.Name("status").Equal(expression.Value(string(received)))
	if n := count(reqs.Scan(ctx, &f)); n != 20 {
		t.Fatalf("RECEIVED requests: %d, want 20", n)
	}
	if n := count(reqs.In(env.Table.Scope("userId", "alice")).Scan(ctx, &f)); n != 10 {
		t.Fatalf("alice's RECEIVED requests: %d, want 10", n)
	}
	if n := env.Calls.Count("DynamoDB.Scan"); n != 3 {
		t.Fatalf("%d Scan calls for 3 small scans", n)
	}
	// Stopping early stops reading.
	env.Calls.Reset()
	for _, err := range reqs.Scan(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if n := env.Calls.Count("DynamoDB.Scan"); n != 1 {
		t.Fatalf("%d Scan calls after stopping at the first item", n)
	}
}
