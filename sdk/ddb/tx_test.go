package ddb_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// A retried transaction with the same client token applies once.
func TestTransactTokenIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, caps := entities(env.Table)
	if err := caps.Put(&capacity{EventID: "e1", Remaining: 10}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	tx := func(token string) error {
		return env.DB.TransactToken(ctx, token,
			caps.Update(capacityKey("e1")).Bounded("capacityRemaining", -1, &zero, nil).Op(),
			reqs.Put(&request{RequestID: "r1", Status: succeeded}),
		)
	}
	// Tokens are account-wide (DynamoDB Local: across tables) for 10
	// minutes, so this run's are its own: a fixed one made a second run
	// (go test -count=2) fail with IdempotentParameterMismatch.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	for i := 0; i < 3; i++ {
		if err := tx(run + "-r1"); err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	c, err := caps.GetStrong(ctx, capacityKey("e1"))
	if err != nil || c.Remaining != 9 {
		t.Fatalf("remaining = %+v %v, want 9 after one applied transaction", c, err)
	}
	// Another token is another transaction.
	if err := tx(run + "-r1-again"); err != nil {
		t.Fatal(err)
	}
	if c, _ := caps.GetStrong(ctx, capacityKey("e1")); c.Remaining != 8 {
		t.Fatalf("remaining = %d, want 8", c.Remaining)
	}
	// The same token with other operations is refused, not applied.
	err = env.DB.TransactToken(ctx, run+"-r1", caps.Update(capacityKey("e1")).Add("capacityRemaining", 100).Op())
	if err == nil {
		t.Fatal("same token, other operations: accepted")
	}
	var te *ddb.TxError
	if errors.As(err, &te) {
		t.Fatalf("a token mismatch is not a cancellation: %v", err)
	}
	if c, _ := caps.GetStrong(ctx, capacityKey("e1")); c.Remaining != 8 {
		t.Fatalf("remaining = %d after a refused transaction", c.Remaining)
	}
}
