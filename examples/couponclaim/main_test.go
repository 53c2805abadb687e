package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
	"github.com/pacerhq/pacer/sdk/standin"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{DynamoDB: true})
}

// The program's own run, on a table it creates.
func TestRun(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t, &schema) // for the client; run creates its own table
	var out bytes.Buffer
	if err := run(context.Background(), env.DB.Table(ddbtest.TableName(t)+"-run", &schema), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"3 of 5 users claimed",
		"second claim refused; first claim at ",
		"remaining 0 of 3, 3 claims recorded",
		"zoe has 5 claims in 3 pages",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// 40 users race for 15 units: exactly 15 claims, each user at most once,
// and the counter agrees with the claims.
func TestClaimUnderContention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	svc := NewService(env.Table)
	if err := svc.Issue(ctx, "c1", "race", 15); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	won, soldOut, dup := 0, 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		for range 2 { // every user tries twice at once
			wg.Go(func() {
				_, err := svc.Claim(ctx, "c1", fmt.Sprintf("u%02d", i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, ErrSoldOut):
					soldOut++
				case errors.Is(err, ErrAlreadyClaimed):
					dup++
				default:
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	if won != 15 || won+soldOut+dup != 80 {
		t.Fatalf("won %d, sold out %d, duplicates %d", won, soldOut, dup)
	}
	c, err := svc.Coupon(ctx, "c1")
	if err != nil || c.Remaining != 0 {
		t.Fatalf("coupon = %+v %v", c, err)
	}
	n, err := svc.Claimants(ctx, "c1")
	if err != nil || n != 15 {
		t.Fatalf("%d claims recorded (%v), want 15", n, err)
	}
}

func TestClaimErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	svc := NewService(env.Table)
	if _, err := svc.Claim(ctx, "nope", "u1"); !errors.Is(err, ErrNoCoupon) {
		t.Fatalf("claiming a missing coupon: %v", err)
	}
	if _, err := svc.Coupon(ctx, "nope"); !errors.Is(err, ErrNoCoupon) {
		t.Fatalf("reading a missing coupon: %v", err)
	}
	if err := svc.Issue(ctx, "c#1", "hash in id", 1); err != nil {
		t.Fatal(err)
	}
	if err := svc.Issue(ctx, "c#1", "again", 5); !errors.Is(err, ddb.ErrConditionFailed) {
		t.Fatalf("issuing twice: %v", err)
	}
	first, err := svc.Claim(ctx, "c#1", "u1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := svc.Claim(ctx, "c#1", "u1")
	if !errors.Is(err, ErrAlreadyClaimed) || again.ClaimedAt != first.ClaimedAt {
		t.Fatalf("second claim: %+v %v", again, err)
	}
	if _, err := svc.Claim(ctx, "c#1", "u2"); !errors.Is(err, ErrSoldOut) {
		t.Fatalf("claim after sold out: %v", err)
	}
	// The coupon id with '#' lives under its escaped key, not "c" + "1".
	if _, err := svc.Coupon(ctx, "c"); !errors.Is(err, ErrNoCoupon) {
		t.Fatalf("coupon c: %v", err)
	}
	if _, _, err := svc.ClaimsOf(ctx, "u1", 2, "forged"); !errors.Is(err, ddb.ErrCursor) {
		t.Fatalf("forged cursor: %v", err)
	}
}
