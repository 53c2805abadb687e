package ddb_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

type counter struct {
	EventID   string `dynamodbav:"eventId"`
	Remaining int64  `dynamodbav:"capacityRemaining"`
	Total     int64  `dynamodbav:"capacityTotal"`
	OpenedAt  int64  `dynamodbav:"openedAt"`
	Note      string `dynamodbav:"note,omitempty"`
}

// SetIfNotExists writes only the first value; RunNew returns the item as
// it is after the update.
func TestSetIfNotExistsAndRunNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	_, caps := entities(env.Table)
	k := capacityKey("e1")
	var got counter
	if err := caps.Update(k).SetIfNotExists("openedAt", 100).Add("capacityRemaining", 5).Set("note", "a").RunNew(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if got.OpenedAt != 100 || got.Remaining != 5 || got.Note != "a" {
		t.Fatalf("after first update: %+v", got)
	}
	got = counter{} // like json.Unmarshal, decoding leaves absent attributes' fields alone
	if err := caps.Update(k).SetIfNotExists("openedAt", 200).Add("capacityRemaining", -2).Remove("note").RunNew(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if got.OpenedAt != 100 || got.Remaining != 3 || got.Note != "" {
		t.Fatalf("after second update: %+v (openedAt must stay 100)", got)
	}
	// RunNew on a failed condition returns the *ConditionError with the item.
	var ignored counter
	err := caps.Update(k).Set("note", "b").If(expression.Name("capacityRemaining").GreaterThan(expression.Value(10))).RunNew(ctx, &ignored)
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) || !ce.Exists() {
		t.Fatalf("want *ConditionError with the item, got %v", err)
	}
	var cur counter
	if err := ce.Decode(&cur); err != nil || cur.Remaining != 3 {
		t.Fatalf("condition error item: %+v %v", cur, err)
	}
	if ignored != (counter{}) {
		t.Fatalf("RunNew decoded %+v on failure", ignored)
	}
}

// MustExist turns an update of a missing item into a condition failure
// instead of an upsert; the error says the item does not exist.
func TestUpdateMustExist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	_, caps := entities(env.Table)
	err := caps.Update(capacityKey("nope")).Set("note", "x").MustExist().Run(ctx)
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) || ce.Exists() {
		t.Fatalf("want *ConditionError without an item, got %v", err)
	}
	if _, err := caps.Get(ctx, capacityKey("nope")); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("MustExist created the item: %v", err)
	}
	if err := caps.Update(capacityKey("nope")).Run(ctx); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("empty update: want ErrInvalid, got %v", err)
	}
	if err := caps.Update(capacityKey("x")).Set("PK", "y").Run(ctx); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("updating the key: want ErrInvalid, got %v", err)
	}
}

// A transaction can delete an item and check a condition on another;
// a failed check cancels it and names the check.
func TestTransactionDeleteAndConditionCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, caps := entities(env.Table)
	if err := caps.Put(&capacity{EventID: "open", Remaining: 1}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := caps.Put(&capacity{EventID: "full", Remaining: 0}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := reqs.Put(&request{RequestID: "r1", Status: received}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	hasSeats := expression.Name("capacityRemaining").GreaterThan(expression.Value(0))

	// The check on "full" fails: nothing is deleted.
	err := env.DB.Transact(ctx,
		reqs.Delete(requestKey("r1")).Label("drop"),
		caps.Check(capacityKey("full")).If(hasSeats).Label("seats"),
	)
	var te *ddb.TxError
	if !errors.As(err, &te) || !errors.Is(err, ddb.ErrConditionFailed) {
		t.Fatalf("want *TxError, got %v", err)
	}
	r := te.Reason("seats")
	if r == nil || r.Index != 1 || te.Reasons[0].Code != "None" || te.Reason("drop") != nil {
		t.Fatalf("reasons = %+v", te.Reasons)
	}
	var cur capacity
	if err := r.Decode(&cur); err != nil || cur.EventID != "full" {
		t.Fatalf("check reason item = %+v %v", cur, err)
	}
	if _, err := reqs.Get(ctx, requestKey("r1")); err != nil {
		t.Fatalf("cancelled transaction deleted the item: %v", err)
	}

	// The check on "open" holds: the delete happens, the checked item is
	// unchanged.
	if err := env.DB.Transact(ctx,
		reqs.Delete(requestKey("r1")).If(expression.Name("status").Equal(expression.Value(string(received)))),
		caps.Check(capacityKey("open")).If(hasSeats),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := reqs.Get(ctx, requestKey("r1")); !errors.Is(err, ddb.ErrNotFound) {
		t.Fatalf("deleted item still there: %v", err)
	}
	if c, err := caps.GetStrong(ctx, capacityKey("open")); err != nil || c.Remaining != 1 {
		t.Fatalf("checked item = %+v %v", c, err)
	}

	// A check runs only in a transaction, and needs a condition.
	if err := caps.Check(capacityKey("open")).If(hasSeats).Run(ctx); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("check outside a transaction: want ErrInvalid, got %v", err)
	}
	if err := env.DB.Transact(ctx, caps.Check(capacityKey("open"))); !errors.Is(err, ddb.ErrInvalid) {
		t.Fatalf("check without a condition: want ErrInvalid, got %v", err)
	}
}

// A conditional delete on its own fails with the item it kept.
func TestConditionalDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := ddbtest.New(t, &schema)
	reqs, _ := entities(env.Table)
	if err := reqs.Put(&request{RequestID: "r1", Status: queued}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	err := reqs.Delete(requestKey("r1")).If(expression.Name("status").Equal(expression.Value(string(received)))).Run(ctx)
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) {
		t.Fatalf("want *ConditionError, got %v", err)
	}
	var cur request
	if err := ce.Decode(&cur); err != nil || cur.Status != queued {
		t.Fatalf("kept item = %+v %v", cur, err)
	}
	if err := reqs.Delete(requestKey("absent")).Run(ctx); err != nil {
		t.Fatalf("deleting an absent item: %v", err)
	}
}
